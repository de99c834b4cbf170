"""A format says what it is once, in its family's ``manifest.py`` (registered with its code by
the family's ``__init__.py``): folder grouping, Blender's lists, ``retromesh formats``, the
docs' table, the texture lookup and the lazy loading all derive from it.

The throwaway family below follows docs/adding-a-format.md step by step (a manifest, a
registration, the family in ``FORMAT_MODULES``) and is then found everywhere without any other
file touched."""
from __future__ import annotations

import ast
import dataclasses
import io
import re
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import retromesh
from helpers.cli import flat, run
from retromesh import batch, imageformats, registry
from retromesh.blender import bridge

SRC = Path(retromesh.__file__).parent

# -- no extension hard-coded outside its registration -----------------------------------------

#: where an extension may still be written outside a family's package, and why
ALLOWED = {
    ("clitools/luanti.py", "Luanti loads .b3d, .glb/.gltf, .obj and .x, not ."):
        "Luanti's own list of the files its loaders read",
    ("imageformats.py", "dtx"): "the image table says which extensions a family's module "
                                "brings, so that listing them imports no family",
    ("jsoncodec.py", "b3d"): "the b3d family's package name (old $type module paths)",
    ("luanti/clipsback.py", "b3d"): "the B3D family's key of kept data in node extras",
    ("luanti/scene.py", ".b3d"): "Luanti's list of the model files it loads (MODEL_SUFFIXES)",
    ("luanti/scene.py", ".obj"): "Luanti's list of the model files it loads (MODEL_SUFFIXES)",
}


def _game_extensions() -> set[str]:
    """Every extension of a registered game format (glTF, the hub every conversion goes
    through and the default output, is named by the command line, the gallery and Blender's
    bridge by design; so is PNG, the image every texture becomes in glTF, registered as a
    file type for textures to convert to and from)."""
    return {e for f in registry.formats() if f.family not in ("glTF 2.0", "Image")
            for e in f.extensions}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _functions(tree: ast.AST) -> dict[int, str]:
    """id of each node -> the name of the top-level function it is in."""
    out: dict[int, str] = {}
    for top in getattr(tree, "body", []):
        if isinstance(top, ast.FunctionDef):
            for node in ast.walk(top):
                out[id(node)] = top.name
    return out


def _outside_registrations() -> list[Path]:
    """The modules of retromesh that are no family's (``formats/<family>/``, ``gltf/``,
    ``image/``)."""
    return [p for p in sorted(SRC.rglob("*.py"))
            if not (p.relative_to(SRC).parts[0] == "formats" and len(p.relative_to(SRC).parts) > 2)
            and p.relative_to(SRC).parts[0] not in ("gltf", "image")]


def _hard_coded(paths: list[Path], root: Path) -> list[str]:
    """``file:line: 'literal'`` for each string (not a docstring) naming a game extension."""
    exts = _game_extensions()
    roles = {c.role for f in registry.formats() for c in f.companions}    # option names
    token = re.compile(r"(?<![\w/])\.(" + "|".join(sorted(exts, key=len, reverse=True))
                       + r")(?![\w-])", re.IGNORECASE)
    found = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs, functions = _docstrings(tree), _functions(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) \
                    or id(node) in docs or node.value in roles:
                continue
            value = node.value
            if re.fullmatch(r"retromesh(\.\w+)+", value):          # a module's name
                continue
            if (rel, functions.get(id(node), "")) in ALLOWED or (rel, value) in ALLOWED:
                continue
            if value.lower().lstrip(".") in exts or token.search(value):
                found.append(f"{rel}:{node.lineno}: {value!r}")
    return found


def test_no_extension_is_hard_coded_outside_its_registration() -> None:
    found = _hard_coded(_outside_registrations(), SRC)
    assert not found, "extensions written outside their format's registration:\n" + \
        "\n".join(found)


def test_the_scan_sees_an_extension_written_by_hand(tmp_path) -> None:
    """The test above fails on the old tables and help texts."""
    old = tmp_path / "old.py"
    old.write_text('"""A docstring may say .msh."""\n_RULES = {"msh": ("skl", None, "ani")}\n'
                   'HELP = "Don\'t read same-name .skl/.ani/.obj/.anm."\nROLE = "hva"\n')
    assert sorted(f.split(": ", 1)[1] for f in _hard_coded([old], tmp_path)) == sorted([
        "'msh'", "'skl'", "'ani'", '"Don\'t read same-name .skl/.ani/.obj/.anm."'])


# -- said once -----------------------------------------------------------------------------

#: the fields a manifest declares (the registration adds the code: read, write, sniff...)
DECLARED = ("name", "family", "description", "extensions", "magic_certain", "endian",
            "scene_options", "companions", "grouping", "yields_name", "shared_extension",
            "blender", "forwards", "folders")


def test_each_registered_format_is_what_its_manifest_declares() -> None:
    declared = registry.declared()
    for f in registry.formats():
        d = declared.get(f.name)
        assert d is not None, f"{f.name} is registered but declared in no manifest"
        assert {k: getattr(f, k) for k in DECLARED} == {k: getattr(d, k) for k in DECLARED}
        assert f.grouping in registry.GROUPING


def test_every_companion_names_a_declared_format_and_a_reading_option() -> None:
    declared = registry.declared()
    for f in registry.formats():
        for c in f.companions:
            assert c.format in declared, (f.name, c)
            assert not c.role or c.role in f.scene_options, (f.name, c.role)
            assert all(p.startswith("{stem}") for p in c.beside), (f.name, c.beside)


# -- a throwaway family, added as docs/adding-a-format.md says ------------------------------

MANIFEST = '''
"""The Zed family (a test's throwaway): declared once."""
from retromesh.registry import Companion, Format

ZMD = Format(
    name="zmd", family="Zed", description="Zed model", extensions=("zmd",), magic_certain=True,
    scene_options=("source", "skeleton", "animations"),
    companions=(Companion("skeleton", "zsk", ("{stem}.zsk",)),
                Companion("animations", "zan", ("{stem}.zan", "{stem}_*.zan"), many=True)))
ZSK = Format(name="zsk", family="Zed", description="Zed skeleton", extensions=("zsk",),
             grouping="skeleton")
ZAN = Format(name="zan", family="Zed", description="Zed animation", extensions=("zan",),
             grouping="part")

FORMATS = (ZMD, ZSK, ZAN)
'''

INIT = '''
"""The Zed family: registers what its manifest declares, with the code."""
from retromesh.records import record
from retromesh.registry import register
from retromesh.scene import Scene

from .manifest import ZAN, ZMD, ZSK


@record
class ZedFile:
    data: bytes


def read(r):
    return ZedFile(r.rest())


def write(doc):
    return doc.data


def to_scene(doc, source=None, skeleton=None, animations=None):
    return Scene(name="zed")


def from_scene(scene):
    return ZedFile(b"ZED1")


for declaration in (ZMD, ZSK, ZAN):
    register(declaration, doc_types=(ZedFile,), sniff=lambda h: h[:3] == b"ZED", read=read,
             write=write, to_scene=to_scene, from_scene=from_scene)
'''


@pytest.fixture
def zed(tmp_path, monkeypatch):
    """A family package ``zed_<id>`` on the path and in ``FORMAT_MODULES``, gone afterwards."""
    name = f"zed_{uuid.uuid4().hex[:8]}"
    package = tmp_path / "site" / name
    package.mkdir(parents=True)
    (package / "manifest.py").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    (package / "__init__.py").write_text(textwrap.dedent(INIT), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(registry, "FORMAT_MODULES", (*registry.FORMAT_MODULES, name))
    yield name
    for fmt in ("zmd", "zsk", "zan"):
        registry.unregister(fmt)
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def _models(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in ("hero.zmd", "hero.zsk", "hero_walk.zan", "villain.zmd", "idle.zan"):
        (folder / n).write_bytes(b"ZED1")


def test_the_index_comes_from_the_manifest_without_importing_the_family(zed) -> None:
    assert registry.format_index()["zmd"] == zed
    assert zed not in sys.modules                  # only its manifest was read
    assert registry.declared()["zsk"].grouping == "skeleton"


def test_a_throwaway_format_is_grouped_in_a_folder(zed, tmp_path) -> None:
    _models(tmp_path / "in")
    jobs = batch.plan([tmp_path / "in"], tmp_path / "out")
    by_source = {j.source.name: j for j in jobs}
    assert sorted(by_source) == ["hero.zmd", "idle.zan", "villain.zmd"]
    hero = by_source["hero.zmd"]
    assert [p.name for p in hero.members] == ["hero.zsk", "hero_walk.zan"]
    assert hero.load_options["skeleton"].name == "hero.zsk"
    assert hero.target.name == "hero.glb"


def test_a_throwaway_format_is_in_blenders_lists_and_groups(zed, tmp_path) -> None:
    _models(tmp_path / "in")
    assert {"zmd", "zsk", "zan"} <= set(bridge.import_extensions())
    assert {"zmd", "zsk", "zan"} <= set(bridge.export_extensions())
    assert "zmd" in bridge.drop_extensions()
    job, = bridge.group_files([tmp_path / "in" / "hero.zmd"])
    assert job.options["skeleton"].name == "hero.zsk"
    assert [p.name for p in job.options["animations"]] == ["hero_walk.zan"]
    picked = bridge.group_files([tmp_path / "in" / "idle.zan", tmp_path / "in" / "villain.zmd"])
    assert [(j.main.name, sorted(j.options)) for j in picked] == [("villain.zmd", ["animations"])]


def test_a_throwaway_format_is_in_retromesh_formats(zed) -> None:
    text = flat(run("formats"))
    assert "zmd (.zmd): Zed model" in text and "reads beside it: .zsk .zan" in text
    assert "| `zmd` | Zed | `.zmd` | read, write, to glTF, from glTF | `.zsk` `.zan` |" \
        in run("formats", "--markdown").output


def test_a_throwaway_format_is_read_and_typed(zed, tmp_path) -> None:
    _models(tmp_path / "in")
    module = sys.modules.get(zed) or __import__(zed)
    doc = retromesh.read(tmp_path / "in" / "hero.zmd", type=module.ZedFile)
    assert retromesh.to_bytes(doc) == b"ZED1"


def test_a_role_companion_of_a_format_is_importable_in_blender() -> None:
    """``.hva`` has no scene of its own, but Blender imports it picked with its ``.vxl``."""
    hva = registry.get("hva")
    assert hva.to_scene is None and "hva" in bridge.import_extensions()
    assert "obj" in bridge.import_extensions() and "obj" not in bridge.drop_extensions()


# -- image formats ---------------------------------------------------------------------------

def test_a_registered_image_format_is_found_and_decoded(tmp_path) -> None:
    """A texture format of a game (LithTech's ``.dtx`` to come) registers with a decoder of its
    own: a texture named ``skin.bmp`` is found as ``skin.zim`` and becomes PNG."""
    from PIL import Image

    from retromesh.textures import TextureFinder, gltf_image

    def decode(data: bytes) -> Image.Image:
        return Image.new("RGBA", (data[4], data[5]), (255, 0, 0, 255))

    fmt = imageformats.ImageFormat("zim", ("zim",), sniff=lambda h: h[:4] == b"ZIM1", open=decode)
    imageformats.register(fmt)
    try:
        (tmp_path / "skin.zim").write_bytes(b"ZIM1\x02\x03")
        found = TextureFinder(tmp_path).load("skin.bmp")
        assert not isinstance(found, str), found
        assert found.path.name == "skin.zim" and found.converted
        data, mime = gltf_image(b"ZIM1\x02\x03")
        assert mime == "image/png" and Image.open(io.BytesIO(data)).size == (2, 3)
    finally:
        imageformats.unregister("zim")
    assert "zim" not in imageformats.image_extensions()


def test_the_image_table_keeps_the_lookup_order() -> None:
    assert imageformats.image_extensions() == ("png", "jpg", "jpeg", "tga", "bmp", "dds", "pcx",
                                               "dtx")
    assert imageformats.pillow_formats()[:2] == ("PNG", "JPEG")


def test_declarations_are_plain_records() -> None:
    """A manifest holds data only: a declaration is a Format without code."""
    for f in registry.declared().values():
        code = {k: getattr(f, k) for k in ("read", "write", "to_scene", "from_scene", "sniff",
                                            "group_folder", "group_picked")}
        assert not any(code.values()), f.name
        assert dataclasses.is_dataclass(f)
