"""Hostile input (issue #13): every regression file ends in success, FormatError (reading) or
DocumentError (writing), reads nothing outside its folder, writes nothing outside the output
folder and stays within memory; plus unit tests of each defence and a short fuzz run."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import retromesh
from retromesh import DocumentError, FormatError, LossWarning
from retromesh.scene import Mesh, Node, Primitive, Scene, Skin

ROOT = Path(__file__).resolve().parents[1]
REGRESSIONS = ROOT / "tests" / "regressions"
sys.path.insert(0, str(ROOT / "tools" / "fuzz"))

#: what each family's regression files are saved to after reading
OUTPUTS = {
    "gltf": ["out.glb", "out.gltf", "out.b3d", "out.msh", "out.vxl", "out.abc"],
    "b3d": ["out.glb", "out.b3d", "out.msh", "out.abc"],
    "lithtech": ["out.glb", "out.abc", "out.vxl"],
}
ALLOWED = {"ok", "format", "document"}


def _regression_files() -> list[Path]:
    return sorted(p for p in REGRESSIONS.glob("*/*") if p.suffix not in (".bin", ".md"))


@pytest.fixture(scope="module")
def driver():
    from driver import Driver
    d = Driver(timeout=60.0)
    yield d
    d.stop()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """``<tmp>/<family>/a/b/{in,out}`` holding each family's regression files, with bait."""
    from run import prepare_case_dir
    root = tmp_path_factory.mktemp("hostile")
    for family in sorted({p.parent.name for p in _regression_files()}):
        inp, _ = prepare_case_dir(root, family)
        for f in (REGRESSIONS / family).iterdir():
            shutil.copyfile(f, inp / f.name)
    return root


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("path", _regression_files(), ids=lambda p: f"{p.parent.name}/{p.name[:12]}")
def test_regression_file(path, driver, sandbox):
    family = path.parent.name
    base = sandbox / family / "a" / "b"
    out = base / "out"
    for p in out.iterdir():
        p.unlink()
    before = _listing(sandbox)
    outputs = [str(out / o) for o in OUTPUTS.get(family, ["out.glb"])]
    result = driver.run({"input": str(base / "in" / path.name), "outputs": outputs})
    assert result["status"] in ALLOWED, result
    created = {p for p in _listing(sandbox) - before if not p.startswith(f"{family}/a/b/out/")}
    assert not created, f"written outside the output folder: {created}"


# -- containment --------------------------------------------------------------------------
def test_safe_name():
    from retromesh.safenames import safe_name
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("C:\\Windows\\win.ini") == "win.ini"
    assert safe_name("data:application/octet-stream;base64,AAAA") == "file"
    assert safe_name("..") == "file"
    assert safe_name("CON") == "_CON"
    assert safe_name("nul.png") == "_nul.png"
    assert safe_name("a\0b/c:d?.png") == "c_d_.png"
    assert len(safe_name("x" * 500 + ".png")) <= 120 and safe_name("x" * 500 + ".png").endswith(".png")


def test_contained_file(tmp_path):
    from retromesh.safenames import UnsafePath, contained_file
    inside = tmp_path / "in"
    inside.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (inside / "ok.bin").write_bytes(b"data")
    (inside / "link.bin").symlink_to("../secret.txt")
    os.mkfifo(inside / "pipe.bin")
    assert contained_file(inside, "ok.bin", 100) == b"data"
    assert contained_file(inside, "./ok%2Ebin", 100) == b"data"
    for uri in ("../secret.txt", "%2e%2e/secret.txt", "%2E%2E%2Fsecret.txt", str(tmp_path / "secret.txt"),
                "/dev/zero", "C:/x", "file:///etc/passwd", "link.bin", "pipe.bin", "a%00b"):
        with pytest.raises(UnsafePath):
            contained_file(inside, uri, 100)
    with pytest.raises(UnsafePath):
        contained_file(inside, "ok.bin", 2)


def _triangle_gltf(buffer_uri: str) -> str:
    import base64
    import json
    data = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32).tobytes()
    return json.dumps({
        "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "buffers": [{"byteLength": 36, "uri": buffer_uri or "data:application/octet-stream;base64,"
                     + base64.b64encode(data).decode()}],
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0, 0, 0], "max": [1, 1, 0]}]})


def test_gltf_buffer_outside_the_folder_is_not_read(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 64)
    for uri in ("../secret.bin", "%2e%2e/secret.bin", str(tmp_path / "secret.bin"), "/dev/zero"):
        (tmp_path / "in" / "m.gltf").write_text(_triangle_gltf(uri))
        with pytest.raises(FormatError, match=r"buffers\[0\]\.uri"):
            retromesh.read(tmp_path / "in" / "m.gltf")


def test_written_gltf_resources_stay_in_the_output_folder(tmp_path):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    data = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32).tobytes()
    (tmp_path / "in" / "sub" / "CON").write_bytes(data)
    (tmp_path / "in" / "m.gltf").write_text(_triangle_gltf("sub/CON"))
    doc = retromesh.read(tmp_path / "in" / "m.gltf")
    # what a hostile document could say once read: names that climb out of the folder
    doc.resources = {"../../evil.bin": data, "data:,x": b"x"}
    doc.json["buffers"][0]["uri"] = "../../evil.bin"
    doc.gltf.buffers[0].uri = "../../evil.bin"
    out = tmp_path / "deep" / "out"
    with pytest.warns(LossWarning, match="evil.bin"):
        written = retromesh.write(doc, out / "m.gltf")
    assert {p.parent for p in written} == {out}
    assert sorted(p.name for p in out.iterdir()) == ["evil.bin", "m.gltf"]
    assert '"uri": "evil.bin"' in (out / "m.gltf").read_text()


def test_data_uri_never_becomes_a_file(tmp_path):
    (tmp_path / "m.gltf").write_text(_triangle_gltf(""))
    doc = retromesh.read(tmp_path / "m.gltf")
    written = retromesh.write(doc, tmp_path / "out" / "copy.gltf")
    assert [p.name for p in written] == ["copy.gltf"]
    assert retromesh.load(written[0]).counts()["vertices"] == 3


def test_companion_names_are_plain_names(tmp_path):
    from retromesh import _write_result
    with pytest.warns(LossWarning, match="not a plain file name"):
        written = _write_result({"": b"main", "../../evil.png": b"x", "/etc/x.png": b"y"},
                                tmp_path / "out" / "m.b3d")
    assert {p.parent for p in written} == {tmp_path / "out"}
    assert sorted(p.name for p in written) == ["evil.png", "m.b3d", "x.png"]


# -- glTF validation ----------------------------------------------------------------------
def _gltf_with(**edits) -> bytes:
    import json
    doc = json.loads(_triangle_gltf(""))
    for key, value in edits.items():
        doc[key] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize("edits, where", [
    ({"bufferViews": [{"buffer": 0, "byteLength": 36, "byteStride": -64}]}, r"byteStride"),
    ({"bufferViews": [{"buffer": 0, "byteLength": 36, "byteStride": 8}]}, r"byteStride"),
    ({"bufferViews": [{"buffer": 0, "byteOffset": 30, "byteLength": 36}]}, r"bufferViews\[0\]"),
    ({"accessors": [{"componentType": 5126, "count": 2 ** 31, "type": "VEC3"}]}, r"accessors\[0\]\.count"),
    ({"accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3"}]}, r"accessors\[0\]\.count"),
    ({"accessors": [{"bufferView": 0, "componentType": 5124, "count": 3, "type": "VEC3"}]}, r"componentType"),
    ({"accessors": ["x"]}, r"accessors\[0\]"),
    ({"nodes": [{"mesh": 0, "children": [1]}, {"children": [0]}]}, r"nodes\[\d\]\.children"),
    ({"nodes": [{"mesh": 0, "rotation": [0, 0, 0, 1, 0]}]}, r"nodes\[0\]\.rotation"),
    ({"nodes": [{"mesh": 0, "scale": []}]}, r"nodes\[0\]\.scale"),
    ({"nodes": [{"mesh": 0, "matrix": [1e308] * 16}]}, r"nodes\[0\]"),
    ({"nodes": [{"mesh": "0"}]}, r"nodes\[0\]\.mesh"),
    ({"materials": [None]}, r"materials\[0\]"),
    ({"extras": 5, "buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,!!"}]},
     r"buffers\[0\]\.uri"),
])
def test_gltf_document_errors_name_the_field(edits, where):
    with pytest.raises(FormatError, match=where):
        retromesh.load(_gltf_with(**edits), format="gltf")


def test_gltf_nan_in_json_is_a_format_error():
    with pytest.raises(FormatError, match="JSON"):
        retromesh.read(_gltf_with().replace(b'"min": [0', b'"min": [NaN'), format="gltf")


def test_gltf_deep_json_is_a_limit_error():
    deep = b'{"asset": {"version": "2.0"}, "extras": ' + b"[" * 200000 + b"]" * 200000 + b"}"
    with pytest.raises(FormatError):
        retromesh.read(deep, format="gltf")


def test_strided_accessor_is_read_without_as_strided():
    import json
    data = np.zeros((3, 4), np.float32)
    data[:, :3] = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    import base64
    doc = json.loads(_triangle_gltf(""))
    doc["buffers"] = [{"byteLength": 48, "uri": "data:;base64," + base64.b64encode(data.tobytes()).decode()}]
    doc["bufferViews"] = [{"buffer": 0, "byteLength": 48, "byteStride": 16}]
    scene = retromesh.load(json.dumps(doc).encode(), format="gltf")
    assert np.array_equal(scene.meshes[0].primitives[0].positions, data[:, :3])


# -- scene validation and writer funnels --------------------------------------------------
def _box_scene(n: int = 8) -> Scene:
    s = Scene()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1], [1, 0, 1]],
                   np.float32)[:n]
    m = s.add_mesh(Mesh(name="m", primitives=[Primitive(positions=pos)]))
    s.add_node(Node(name="n", mesh=m))
    return s


def test_validate_rejects_non_finite_and_wrong_lengths():
    s = _box_scene()
    s.nodes[0].translation = np.array([np.nan, 0, 0])
    with pytest.raises(DocumentError, match="translation"):
        s.validate()
    s.nodes[0].translation = np.zeros(5)
    with pytest.raises(DocumentError, match="3 numbers"):
        s.validate()
    s = _box_scene()
    s.materials.append(retromesh.scene.Material(base_color=(float("nan"), 1, 1, 1)))
    with pytest.raises(DocumentError, match="material 0"):
        s.validate()


def test_partial_triangle_dropped_for_game_writers(tmp_path):
    s = _box_scene()                   # 8 non-indexed vertices: 2 triangles and 2 vertices
    for target in ("out.b3d", "out.msh"):
        with pytest.warns(LossWarning, match="incomplete last triangle"):
            retromesh.save(s, tmp_path / target)
    assert len(s.meshes[0].primitives[0].positions) == 8       # the caller's scene is kept


def test_zero_scale_fixed_up_and_singular_bind_matrix_named(tmp_path):
    s = _box_scene(6)
    s.nodes[0].scale = np.zeros(3)
    with pytest.warns(LossWarning, match="scale 1e-6"):
        retromesh.save(s, tmp_path / "z.b3d")
    assert np.all(s.nodes[0].scale == 0)
    s = _box_scene(6)
    j = s.add_node(Node(name="bone"))
    s.nodes[0].skin = s.add_skin(Skin(joints=[j], inverse_bind_matrices=np.zeros((1, 4, 4))))
    p = s.meshes[0].primitives[0]
    p.joints = np.zeros((6, 4), np.uint16)
    p.weights = np.tile([1.0, 0, 0, 0], (6, 1))
    with pytest.raises(DocumentError, match="skin 0.*joint 0.*'bone'.*singular"):
        retromesh.save(s, tmp_path / "s.b3d")


def test_writer_pack_overflow_is_a_document_error():
    from retromesh.binio import Writer
    w = Writer()
    with pytest.raises(DocumentError, match="'i' field"):
        w.i32(2 ** 40)
    with pytest.raises(DocumentError):
        w.f32(1e308)


def test_stray_writer_exception_becomes_document_error():
    import dataclasses

    from retromesh import registry

    def boom(scene, **options):
        raise np.linalg.LinAlgError("Singular matrix")
    fmt = dataclasses.replace(registry.get("b3d"), from_scene=boom)
    with pytest.raises(DocumentError, match="b3d from_scene failed.*LinAlgError"):
        registry.convert_from_scene(fmt, _box_scene(6))


def test_stray_reader_exceptions_become_format_errors():
    from retromesh import registry
    from retromesh.errors import UnsupportedError

    for exc in (AttributeError("x"), DocumentError("y"), UnsupportedError("z")):
        def read(r, exc=exc):
            raise exc
        fmt = registry.Format(name="fake", family="test", description="", extensions=("fake",),
                              read=read)
        with pytest.raises(FormatError, match=type(exc).__name__) as info:
            registry.parse(fmt, b"data", "f.fake")
        assert isinstance(info.value, UnsupportedError) == isinstance(exc, UnsupportedError)


def test_read_refuses_devices(tmp_path):
    with pytest.raises(retromesh.RetromeshError, match="regular file"):
        retromesh.read("/dev/zero", format="b3d")


# -- the fuzzer itself (time-boxed, fixed seed) --------------------------------------------
@pytest.mark.fuzz
def test_short_fuzz_run(tmp_path):
    import random

    from run import FAMILIES, run_family
    rng = random.Random(13)
    for family in sorted(FAMILIES):
        summary = run_family(family, 70, rng, tmp_path, save=None, timeout=60.0, slow=1e9,
                             mem_mb=1536, rss_mb=400)
        assert summary["cases"] == 70
        assert not summary["findings"], (family, summary["findings"])
