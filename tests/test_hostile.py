"""Hostile input: every regression file ends in success, FormatError (reading) or
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
    "lithtech": ["out.glb", "out.abc", "out.lta", "out.vxl"],
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


def test_companion_names_are_plain_names(tmp_path, monkeypatch):
    """A writer's companion names come from the content: each is written as a plain name
    beside the target (a format's ``from_scene`` returning hostile names, through ``save``)."""
    from retromesh import registry
    from retromesh.formats.b3d.samples import crate_scene

    def hostile(scene):
        return {"": b"main", "../../evil.png": b"x", "/etc/x.png": b"y"}
    monkeypatch.setitem(vars(registry.get("b3d")), "from_scene", hostile)   # a frozen record
    with pytest.warns(LossWarning, match="not a plain file name"):
        written = retromesh.save(crate_scene(), tmp_path / "out" / "m.b3d")
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
    ({"accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3"}]},
     r"accessors\[0\]\.count"),
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


@pytest.mark.fuzz
def test_short_extras_fuzz_run():
    """What writers read back from extras, made hostile (tools/fuzz/extras.py)."""
    from extras import run
    assert run(60, seed=11) == {}


# -- bounded work: big and deep scenes through every writer ---------------------------------
#: every writer, with the kind of scene it needs (skeleton formats want a skin + animation)
WRITERS = {"b3d": "plain", "abc": "skin", "msh": "plain", "skl": "skin", "ani": "skin",
           "vxl": "plain", "solid": "plain", "glb": "skin", "gltf": "skin", "phxbn": "skin",
           "anm": "skin", "obj": "plain", "cms": "plain"}
#: the big runs skin only where a skeleton is what the format writes (the linear-work test
#: above covers the skinned ABC and glTF paths)
BIG = {**WRITERS, "abc": "plain", "glb": "plain", "gltf": "plain"}


def _big_scene(n: int, shape: str, kind: str, mesh_every: int = 100) -> Scene:
    """``n`` nodes as roots ("flat"), a chain ("chain"), a 4-ary tree ("tree") or a chain
    with a leaf on every link ("comb"); a triangle on every ``mesh_every``-th node; for
    ``kind="skin"`` a skin over every node and an animation of every 10th."""
    from retromesh.scene import Animation, Channel
    s = Scene()
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    m = s.add_mesh(Mesh(name="m", primitives=[Primitive(positions=tri)]))
    spine = None
    for i in range(n):
        parent = {"flat": None, "chain": i - 1 if i else None, "tree": (i - 1) // 4 if i else None,
                  "comb": spine}[shape]
        k = s.add_node(Node(name=f"n{i}", translation=[0.1, 0, 0],
                            mesh=m if kind == "plain" and i % mesh_every == 0 else None), parent=parent)
        if shape == "comb" and i % 2 == 0:
            spine = k
    if kind == "skin":
        p = Primitive(positions=tri, joints=np.array([[0, 1, 2, 3]] * 3, np.uint16),
                      weights=np.array([[1.0, 0, 0, 0]] * 3, np.float32))
        mi = s.add_mesh(Mesh(name="skinned", primitives=[p]))
        sk = s.add_skin(Skin(joints=list(range(n)), inverse_bind_matrices=np.linalg.inv(s.world_matrices())))
        s.add_node(Node(name="body", mesh=mi, skin=sk))
        s.animations.append(Animation(name="a", channels=[
            Channel(j, "rotation", np.array([0.0, 1.0]), np.array([[0, 0, 0, 1], [0, 0.1, 0, 0.995]]))
            for j in range(0, n, 10)]))
    return s


def _save_outcome(scene: Scene, target: Path) -> str:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            retromesh.save(scene, target, force=True)    # the writer, not the game's rules
        except DocumentError as exc:
            assert "Recursion" not in str(exc), exc
            return str(exc)
    return "ok"


def _lines_run(fn) -> int:
    """Lines of retromesh's own code executed by ``fn()`` (numpy and the standard library are
    not traced): a measure of Python-level work that does not depend on the machine's speed."""
    src = str(Path(retromesh.__file__).resolve().parent)      # the copy under test (installed or not)
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(src) else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(old)
    return count


@pytest.mark.parametrize("ext", sorted(WRITERS))
def test_writer_work_grows_linearly_with_nodes(ext, tmp_path):
    """4x the nodes (a deep comb: per-node walks up the tree are quadratic there) must cost at
    most ~4x the Python lines: no per-node search, list scan or walk up the hierarchy."""
    shape = "tree" if ext == "b3d" else "comb"          # B3D refuses trees deeper than 200
    _save_outcome(_big_scene(40, shape, WRITERS[ext], mesh_every=20), tmp_path / f"o.{ext}")
    runs = {}                                            # (imports done above, not counted)
    for n in (400, 1600):
        scene = _big_scene(n, shape, WRITERS[ext], mesh_every=20)
        runs[n] = _lines_run(lambda scene=scene: _save_outcome(scene, tmp_path / f"o.{ext}"))
    assert runs[400] > 0, "no line of retromesh was traced"
    assert runs[1600] <= 4 * runs[400] * 1.25, runs


@pytest.mark.parametrize("ext", sorted(WRITERS))
def test_writer_finishes_20000_nodes_and_a_5000_deep_chain(ext, tmp_path):
    flat = _save_outcome(_big_scene(20000, "flat", BIG[ext]), tmp_path / f"flat.{ext}")
    assert flat == "ok" or "the engine packs bone ids" in flat or "LIMITS" in flat, flat
    deep = _save_outcome(_big_scene(5000, "chain", BIG[ext]), tmp_path / f"deep.{ext}")
    # B3D names the depth it refuses; the others write the chain
    assert deep == "ok" or "deeper than 200" in deep or "LIMITS" in deep, deep


def test_deep_gltf_chain_reads_and_converts(tmp_path):
    import json
    n = 5000
    doc = {"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],
           "nodes": [{"children": [i + 1]} if i + 1 < n else {} for i in range(n)]}
    (tmp_path / "chain.gltf").write_text(json.dumps(doc))
    scene = retromesh.load(tmp_path / "chain.gltf")
    assert len(scene.nodes) == n and scene.parents()[n - 1] == n - 2
    retromesh.save(scene, tmp_path / "chain.glb")
    assert retromesh.load(tmp_path / "chain.glb").parents()[n - 1] == n - 2


def test_hierarchy_walks_are_iterative():
    from retromesh.hierarchy import depth_of, nearest_in, top_down
    n = 100_000                                          # far past the recursion limit
    parents = [-1] + list(range(n - 1))
    assert top_down(parents) == list(range(n))
    assert depth_of(parents)[-1] == n - 1
    near = nearest_in(parents, {0, 50_000})
    assert near[49_999] == 0 and near[50_000] == 50_000 and near[-1] == 50_000
    assert nearest_in(parents, {0, 50_000}, include_self=False)[50_000] == 0


# -- bounded work: derived sizes --------------------------------------------------------------
def _anm(length_ms: int, bones: int = 6):
    from retromesh.formats.overgrowth.anm import WEAPON8_DTYPE, AnmFile, AnmKeyframe
    mats = np.tile(np.eye(4, dtype="<f4").T.reshape(16), (bones, 1))
    keys = [AnmKeyframe(t, mats, np.zeros(0, "<f4"), np.zeros(0, WEAPON8_DTYPE), 0, None, [], [], [], [])
            for t in range(0, 1001, 200)]
    return AnmFile(version=11, centered=0, looping=1, length=length_ms, keyframes=keys)


def test_anm_resampling_is_capped(monkeypatch):
    from retromesh.formats.overgrowth import scene as wscene
    from retromesh.formats.overgrowth.anm import write
    # the campaign's 3 KB file: 70 minutes at 30 Hz of 6 bones (1.3 s of sampling before)
    data = write(_anm(4_195_504))
    with pytest.raises(retromesh.LimitError, match=r"LIMITS\['sample_bones'\].*raise them") as info:
        retromesh.load(data, format="anm")
    assert "125873 samples of 6 bones (length 4195.5 s at 30 fps)" in str(info.value)
    monkeypatch.setitem(wscene.LIMITS, "sample_bones", 1000)
    with pytest.raises(retromesh.LimitError):
        retromesh.load(write(_anm(20_000)), format="anm")            # 601 samples x 6 bones
    monkeypatch.setitem(wscene.LIMITS, "sample_bones", 4000)
    scene = retromesh.load(write(_anm(20_000)), format="anm")
    assert len(scene.animations[0].channels[0].times) == 601


def test_anm_writer_checks_keys_x_bones(monkeypatch, tmp_path):
    from retromesh.formats.overgrowth import scene as wscene
    scene = _big_scene(50, "chain", "skin")
    monkeypatch.setitem(wscene.LIMITS, "sample_bones", 100)         # 31 keys x 50 bones
    with pytest.raises(DocumentError, match=r"31 keys of 50 bones.*LIMITS\['sample_bones'\]"):
        retromesh.save(scene, tmp_path / "a.phxbn")


def test_voxeliser_work_is_capped(tmp_path):
    s = Scene()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    faces = np.array([0, 1, 2, 0, 2, 3, 0, 3, 1, 1, 3, 2], np.uint32)
    m = s.add_mesh(Mesh(name="m", primitives=[Primitive(positions=pos, indices=np.tile(faces, 500))]))
    s.add_node(Node(name="n", mesh=m))
    with pytest.raises(DocumentError, match=r"2000 triangles|LIMITS\['samples'\]"):
        retromesh.save(s, tmp_path / "big.vxl")                    # one tetrahedron 500 times
    s.meshes[0].primitives[0].indices = faces
    retromesh.save(s, tmp_path / "small.vxl")


def test_game_writers_cap_mesh_nodes(tmp_path, monkeypatch):
    from retromesh import scene as scene_mod
    s = _big_scene(300, "flat", "plain", mesh_every=1)
    monkeypatch.setitem(scene_mod.LIMITS, "mesh_nodes", 200)
    with pytest.raises(DocumentError, match=r"300 nodes hold a mesh.*LIMITS\['mesh_nodes'\]"):
        retromesh.save(s, tmp_path / "many.abc")
    retromesh.save(s, tmp_path / "many.glb")                       # glTF instances are cheap
    monkeypatch.setitem(scene_mod.LIMITS, "mesh_nodes", 300)
    retromesh.save(s, tmp_path / "many.b3d")


def test_validate_checks_morph_targets():
    from retromesh.scene import MorphTarget
    s = Scene()
    p = Primitive(positions=np.zeros((3, 3), np.float32),
                  targets=[MorphTarget(positions=np.array([[0, 0, 0], [np.inf, 0, 0], [0, 0, 0]],
                                                          np.float32))])
    s.add_node(Node(name="m", mesh=s.add_mesh(Mesh(primitives=[p]))))
    with pytest.raises(DocumentError, match="morph target 0 positions"):
        s.validate()


def test_abc_writer_caps_node_keys(tmp_path, monkeypatch):
    from retromesh.formats.lithtech import scene_write
    from retromesh.scene import Animation, Channel
    s = Scene()
    root = s.add_node(Node(name="root", mesh=s.add_mesh(Mesh(primitives=[Primitive(
        positions=np.eye(3, dtype=np.float32))]))))
    for i in range(30):
        s.add_node(Node(name=f"n{i}"), root)
    times = np.arange(40, dtype=np.float32) / 10
    s.animations.append(Animation(name="a", channels=[Channel(1, "translation", times,
                                                              np.zeros((40, 3)))]))
    monkeypatch.setitem(scene_write.LIMITS, "node_keys", 31 * 40 - 1)
    with pytest.raises(DocumentError, match="node_keys"):
        retromesh.save(s, tmp_path / "o.abc")
    monkeypatch.setitem(scene_write.LIMITS, "node_keys", 31 * 40)
    retromesh.save(s, tmp_path / "o.abc")
