"""Start-up work: what a command imports, and the writers' fast paths giving the
same output as before. Timings live in benchmarks/, never here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from retromesh import registry

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = [m for m in registry.FORMAT_MODULES if m != "retromesh.gltf"]
GLTF_READING = ("pygltflib", "dataclasses_json", "marshmallow")


def _run(code: str, tmp_path: Path):
    """The JSON a fresh interpreter running ``code`` prints last."""
    # the copy under test, installed or a checkout's src/
    env = dict(os.environ, PYTHONPATH=str(Path(registry.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _modules_after(code: str, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter has imported after ``code``."""
    return set(_run(textwrap.dedent(code) + "\nimport sys, json\n"
                    "print(json.dumps(sorted(sys.modules)))\n", tmp_path))


def _loaded_families(mods: set[str]) -> set[str]:
    return {m for m in registry.FORMAT_MODULES if m in mods}


def test_reading_one_family_imports_only_that_family(tmp_path):
    mods = _modules_after(f"""
        import retromesh
        doc = retromesh.read({str(ROOT / 'examples' / 'crate.b3d')!r})
        assert retromesh.to_bytes(doc)
    """, tmp_path)
    assert _loaded_families(mods) == {"retromesh.formats.b3d"}
    assert not mods & set(GLTF_READING)


def test_writing_glb_imports_no_gltf_reading_library(tmp_path):
    mods = _modules_after(f"""
        import retromesh
        retromesh.convert({str(ROOT / 'examples' / 'crate.b3d')!r}, "crate.glb")
    """, tmp_path)
    assert (tmp_path / "crate.glb").is_file()
    assert _loaded_families(mods) == {"retromesh.formats.b3d", "retromesh.gltf"}
    assert not mods & set(GLTF_READING)
    assert "retromesh.gltf.reader" not in mods


def test_formats_still_loads_every_family(tmp_path):
    mods = _modules_after("import retromesh; retromesh.formats()", tmp_path)
    assert _loaded_families(mods) == set(registry.FORMAT_MODULES)


def test_format_index_matches_what_each_module_registers(tmp_path):
    """format_index() (read off the families' manifests) names, for every format name and
    extension, the one module registering all the formats that claim it (reading a file then
    imports that module alone)."""
    claims = _run("""
        import importlib, json
        from retromesh import registry
        claims = {}
        for mod in registry.FORMAT_MODULES:
            before = set(registry._FORMATS)
            importlib.import_module(mod)
            for name in set(registry._FORMATS) - before:
                f = registry._FORMATS[name]
                for key in (name, *f.extensions):
                    claims.setdefault(key, set()).add(mod)
        print(json.dumps({k: sorted(v) for k, v in claims.items()}))
    """, tmp_path)
    assert {k: [v] for k, v in registry.format_index().items()} == claims


def _example(ext: str) -> str | None:
    found = sorted((ROOT / "examples").rglob(f"*.{ext}"))
    return str(found[0]) if found else None


@pytest.mark.parametrize("ext,junk", [(e, j) for e in ("b3d", "vxl", "hva", "obj", "msh", "glb",
                                                       "solid", "xyz") for j in (False, True)])
def test_lazy_detection_matches_eager(ext, junk, tmp_path):
    """detect() with only the extension's family loaded picks what it picks with all loaded
    (a real file of the type, and bytes no format recognises)."""
    source = None if junk else _example(ext)
    if not junk and source is None:
        pytest.skip(f"no example .{ext}")
    lazy, eager = _run(f"""
        import json, retromesh
        from retromesh import registry
        head = open({source!r}, "rb").read(4096) if {source!r} else bytes(range(64))
        def pick():
            try:
                return registry.detect(head, "x.{ext}").name
            except retromesh.UnknownFormatError as exc:
                return "unknown"
        lazy = pick()
        registry._ensure_loaded()
        print(json.dumps([lazy, pick()]))
    """, tmp_path)
    assert lazy == eager


def _as_pygltflib(g, value):
    """The same object tree built from pygltflib's classes."""
    from retromesh.gltf import model
    if isinstance(value, (model.Model, model.Attributes)):
        return getattr(g, type(value).__name__)(
            **{k: _as_pygltflib(g, v) for k, v in vars(value).items()})
    if isinstance(value, list):
        return [_as_pygltflib(g, v) for v in value]
    return value


def test_gltf_model_json_is_what_pygltflib_writes():
    """The writer's own JSON model serialises as pygltflib's did (fields, defaults, None and
    empty values dropped, ``extensions`` payloads such as ``KHR_materials_unlit: {}`` kept)."""
    import warnings
    g = pytest.importorskip("pygltflib")
    from helpers.make_examples_import import make_examples
    from retromesh.gltf.writer import json_bytes, scene_to_gltf
    from test_gltf import _scene_with_everything
    seen = b""
    for scene in (_scene_with_everything(), make_examples.crate_scene()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = scene_to_gltf(scene, embed_images=False)
        ours = json_bytes(doc.gltf)
        theirs = _as_pygltflib(g, doc.gltf).gltf_to_json(separators=(",", ":"), indent=None)
        assert ours == theirs.encode()
        seen += ours
    assert b'"KHR_materials_unlit":{}' in seen


# -- the glTF writer's vectorised helpers give what the plain numpy formulas give ----------------

def _reference_unit(v, fallback):
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    ok = (n[:, 0] > 1e-12) & np.all(np.isfinite(v), axis=1)
    out = np.empty_like(v)
    out[ok] = v[ok] / n[ok]
    out[~ok] = fallback
    return out.astype(np.float32)


def test_unit_matches_reference_including_degenerate_rows():
    from retromesh.geometry import unit_rows as _unit
    rng = np.random.default_rng(3)
    for width, fallback in ((3, (0.0, 1.0, 0.0)), (4, (0.0, 0.0, 0.0, 1.0))):
        v = rng.normal(size=(5000, width)).astype(np.float32)
        v[::5] = 0
        v[::7, 1] = np.nan
        v[::11, 0] = np.inf
        v[::3] *= np.float32(1e-13)
        assert np.array_equal(_unit(v, fallback), _reference_unit(v, fallback))


def test_compute_normals_matches_per_face_sum():
    from retromesh.gltf.writer import compute_normals
    rng = np.random.default_rng(4)
    pos = rng.normal(size=(200, 3)).astype(np.float32)
    idx = rng.integers(0, 200, size=600).astype(np.uint32)
    tri = idx.reshape(-1, 3)
    acc = np.zeros((200, 3))
    fn = np.cross(pos[tri[:, 1]] - pos[tri[:, 0]], pos[tri[:, 2]] - pos[tri[:, 0]])
    for k in range(3):
        for c in range(3):
            acc[:, c] += np.bincount(tri[:, k], weights=fn[:, c], minlength=200)
    assert np.array_equal(compute_normals(pos, idx), _reference_unit(acc, (0.0, 1.0, 0.0)))


def test_sanitize_weights_sum_to_one_on_the_largest():
    import warnings

    from retromesh.gltf.writer import sanitize_weights
    rng = np.random.default_rng(5)
    w = rng.random((3000, 4)).astype(np.float32)
    w[::4, 3] = np.nan
    w[::6, 2] = -1
    w[::9] = 0
    j = rng.integers(1, 60, size=(3000, 4)).astype(np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jo, wo = sanitize_weights(j, w)
    ref = np.clip(np.nan_to_num(w), 0, None).astype(np.float64)
    s = ref.sum(axis=1)
    assert np.all(wo >= 0) and np.allclose(wo.sum(axis=1, dtype=np.float64), 1, atol=1e-6)
    assert np.all(jo[wo == 0] == 0)
    assert np.array_equal(wo[::9], np.tile([1, 0, 0, 0], (len(wo[::9]), 1)))
    nz = s > 0
    assert np.allclose(wo[nz], (ref[nz] / s[nz, None]), atol=1e-6)


def test_fast_helpers_give_what_numpy_gives():
    """The column-by-column and all-products paths (large meshes, small skeletons) give the
    bits of the plain numpy formulas: row argmax, duplicate-joint merging, quaternion
    matrices, and a POSITION accessor's bounds (a zero bound keeps its sign)."""
    from retromesh import transforms
    from retromesh.geometry import merge_duplicate_joints, row_argmax
    from retromesh.gltf.writer import scene_to_gltf
    from retromesh.scene import Mesh, Node, Primitive, Scene
    from test_fast_paths import merged_pair_by_pair
    rng = np.random.default_rng(6)
    for n in (5, 600, 3000):
        w = rng.choice([0.0, 0.25, 0.5], size=(n, 4)).astype(np.float32)
        assert np.array_equal(row_argmax(w), np.argmax(w, axis=1))
        j = rng.integers(0, 3, size=(n, 4)).astype(np.uint16)
        jr, wr = merged_pair_by_pair(j, w)
        jm, wm = merge_duplicate_joints(j, w)
        assert jm is j and wm is w                     # in place
        assert np.array_equal(jm, jr) and wm.tobytes() == wr.tobytes()
    for shape in ((4,), (30, 4), (200, 4)):
        q = rng.normal(size=shape)
        x, y, z, qw = np.moveaxis(transforms.quat_normalize(q), -1, 0)
        ref = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - qw * z), 2 * (x * z + qw * y),
                        2 * (x * y + qw * z), 1 - 2 * (x * x + z * z), 2 * (y * z - qw * x),
                        2 * (x * z - qw * y), 2 * (y * z + qw * x), 1 - 2 * (x * x + y * y)],
                       axis=-1).reshape(shape[:-1] + (3, 3))
        assert transforms.quat_to_matrix(q).tobytes() == ref.tobytes()
    for zeros in ((0.0,), (-0.0,), (0.0, -0.0)):
        pos = np.abs(rng.normal(size=(501, 3))).astype(np.float32)
        pos[::7, 1] = rng.choice(zeros, size=len(pos[::7]))
        s = Scene()
        s.nodes[s.add_node(Node(name="n"))].mesh = s.add_mesh(Mesh(primitives=[
            Primitive(positions=pos)]))
        acc = scene_to_gltf(s, embed_images=False).gltf.accessors[0]
        assert repr((acc["max"], acc["min"])) == repr((pos.max(axis=0).tolist(),
                                                       pos.min(axis=0).tolist()))


def test_writer_keeps_big_arrays_and_patches_earlier_chunks():
    """Writer.records keeps big arrays by reference (copied once by getvalue); chunk lengths
    around them are still back-patched, and the bytes are those of plain appending."""
    from retromesh.binio import Writer
    big = np.arange(Writer.BIG, dtype="<u4")                 # 4x BIG bytes
    rec = np.zeros(5, dtype=[("a", "<f4"), ("b", "u1")])
    w = Writer("<")
    with w.chunk(b"OUTR"):
        w.u8(1)
        with w.chunk(b"INNR"):
            w.records(big)
            w.records(rec)
            w.records(big[::2])                             # not contiguous: copied
        w.records(big, "<f4")
        assert w.pos == len(w.getvalue())
    expected = bytearray()
    body = (b"\1" + b"INNR" + np.int32(big.nbytes + rec.nbytes + big[::2].nbytes).tobytes()
            + big.tobytes() + rec.tobytes() + big[::2].tobytes() + big.astype("<f4").tobytes())
    expected += b"OUTR" + np.int32(len(body)).tobytes() + body
    assert w.getvalue() == bytes(expected)


# -- Westwood span decoder: the grid-order fast path and the general path agree ------------------

def _random_grid(rng, size):
    from retromesh.formats.westwood.voxels import VoxelGrid
    mask = rng.random(size) < 0.4
    return VoxelGrid(np.where(mask, rng.integers(1, 256, size), 0).astype(np.uint8),
                     np.where(mask, rng.integers(0, 244, size), 0).astype(np.uint8), mask)


def test_span_decoder_columns_in_any_order_or_shared():
    """Span data whose columns are stored in reverse order, or two columns sharing the same
    bytes, decode like the canonical layout (the general path, not the grid-order one)."""
    from retromesh.formats.westwood.voxels import decode_spans, encode_spans
    rng = np.random.default_rng(7)
    grid = _random_grid(rng, (5, 4, 30))
    start, end, data = encode_spans(grid)
    assert decode_spans(start, end, data, grid.size) == grid
    cols = [c for c in range(len(start)) if start[c] != -1]
    out, s2, e2 = bytearray(), start.copy(), end.copy()
    for c in reversed(cols):
        s2[c] = len(out)
        out += data[start[c]:end[c] + 1]
        e2[c] = len(out) - 1
    assert decode_spans(s2, e2, bytes(out), grid.size) == grid
    # columns 0 and 1 pointing at the bytes of column 0
    s3, e3 = start.copy(), end.copy()
    s3[1], e3[1] = start[0], end[0]
    shared = decode_spans(s3, e3, data, grid.size)
    assert np.array_equal(shared.mask[1, 0], grid.mask[0, 0])
    assert np.array_equal(shared.colour[1, 0], grid.colour[0, 0])
    assert np.array_equal(shared.colour[2:], grid.colour[2:])


def test_span_decoder_big_grid_matches_encoder():
    from retromesh.formats.westwood.voxels import decode_spans, encode_spans
    grid = _random_grid(np.random.default_rng(8), (40, 33, 120))
    start, end, data = encode_spans(grid)
    back = decode_spans(start, end, data, grid.size)
    assert back == grid
    assert back.colour.flags.c_contiguous and back.mask.dtype == bool
    assert np.array_equal(back.colour, grid.colour) and np.array_equal(back.normal, grid.normal)


def test_claiming_and_converters_import_one_family(tmp_path):
    mods = _modules_after("""
        from retromesh import registry
        assert [f.name for f in registry.claiming(".B3D")] == ["b3d"]
        assert sorted(f.name for f in registry.claiming("vxl")) == ["aos-vxl", "vxl"]
        assert sorted(registry.converters_to("vox")) == ["vxl"]
    """, tmp_path)
    assert _loaded_families(mods) == {"retromesh.formats.b3d", "retromesh.formats.westwood"}
    assert sorted(f.name for f in registry.claiming("xyz")) == []
    for f in registry.formats():
        for ext in f.extensions:
            assert f in registry.claiming(ext)
    for src in registry.formats():      # every registered converter is found by its target
        for tgt in registry.formats():
            fn = registry.converter(src.name, tgt.name)
            assert fn is None or registry.converters_to(tgt.name)[src.name] is fn
