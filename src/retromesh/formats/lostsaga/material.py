"""Lost Saga material scripts: ``<material dir>/<mesh name>.txt`` (``ioMaterialManager``).

There is no binary material in the engine (``MTL\\0``/3000 is defined but nothing loads it). A
mesh's materials come from an Ogre-like text script, one ``material`` block per submesh,
addressed by the engine as ``"<mesh>/Sub<i>"`` (1-based, in file order)::

    material
    {
        technique
        {
            pass
            {
                shader_group AnimateToonShade
                texture_unit
                {
                    texture shovel_knight.dds
                    tex_coord_set 0
                }
            }
        }
    }

Natively a script is a :class:`MaterialScript` holding the file's bytes (registered as the format
``lsmat`` with no extension of its own, so that no ``.txt`` is ever taken for one: read it with
``retromesh.read(path, format="lsmat")``); ``from_scene`` writes one as the ``<mesh>.txt``
companion of a ``.msh``.

The parser here is tolerant (unknown keywords are kept as properties, unbalanced braces end the
block at end of text, ``//`` comments are skipped); it never raises on odd text. Only what the
conversion needs is interpreted: per material the texture units (``texture``, ``tex_coord_set``),
the pass's ``shader_group``, ``diffuse`` colour and ``scene_blend``/``alpha_rejection``.
"""
from __future__ import annotations

from dataclasses import field
from pathlib import Path

from ...records import record

__all__ = ["Block", "ScriptMaterial", "TextureUnit", "MaterialScript", "parse", "parse_text",
           "find_script", "materials_of", "write_script", "read", "write"]


@record
class MaterialScript:
    """A material script file, kept as its bytes (``materials`` parses it)."""
    text: bytes = b""

    @property
    def materials(self) -> list[ScriptMaterial]:
        return parse(self.text)


def read(r) -> MaterialScript:
    return MaterialScript(r.rest())


def write(doc: MaterialScript) -> bytes:
    return bytes(doc.text)


def info(doc: MaterialScript) -> dict:
    mats = doc.materials
    return {"materials": len(mats), "texture units": sum(len(m.texture_units) for m in mats)}


@record
class Block:
    kind: str = ""
    name: str = ""
    properties: list[tuple[str, list[str]]] = field(default_factory=list)
    children: list[Block] = field(default_factory=list)

    def prop(self, key: str) -> list[str] | None:
        for k, v in self.properties:
            if k == key:
                return v
        return None

    def walk(self):
        """This block and every block inside it, depth first (no recursion: scripts may nest
        thousands of braces deep)."""
        stack = [self]
        while stack:
            b = stack.pop()
            yield b
            stack.extend(reversed(b.children))


@record
class TextureUnit:
    texture: str = ""
    tex_coord_set: int = 0
    properties: dict[str, str] = field(default_factory=dict)


@record
class ScriptMaterial:
    name: str = ""
    shader_group: str = ""
    diffuse: tuple[float, ...] | None = None      # RGBA
    scene_blend: str = ""
    alpha_rejection: str = ""
    texture_units: list[TextureUnit] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


def _tokens(text: str):
    for line in text.splitlines():
        cut = line.find("//")
        if cut >= 0:
            line = line[:cut]
        line = line.replace("{", "\n{\n").replace("}", "\n}\n")
        for part in line.split("\n"):
            part = part.strip()
            if part:
                yield part


def parse_text(text: str) -> list[Block]:
    """Top-level blocks of a script (``material`` blocks and anything else)."""
    root = Block("root")
    stack = [root]
    pending: list[str] | None = None          # a header line waiting for its "{"
    for tok in _tokens(text):
        if tok == "{":
            words = pending or [""]
            b = Block(words[0], " ".join(words[1:]))
            stack[-1].children.append(b)
            stack.append(b)
            pending = None
        elif tok == "}":
            if pending is not None:
                stack[-1].properties.append((pending[0], pending[1:]))
                pending = None
            if len(stack) > 1:
                stack.pop()
        else:
            if pending is not None:
                stack[-1].properties.append((pending[0], pending[1:]))
            words = tok.split()
            if words[0] in ("material", "technique", "pass", "texture_unit") or len(words) == 1:
                pending = words
            else:
                stack[-1].properties.append((words[0], words[1:]))
                pending = None
    if pending is not None:
        stack[-1].properties.append((pending[0], pending[1:]))
    return root.children


def _float(s: str, default: float) -> float:
    try:
        return float(s)
    except ValueError:
        return default


def materials_of(blocks: list[Block]) -> list[ScriptMaterial]:
    out = []
    for i, b in enumerate(x for x in blocks if x.kind == "material"):
        m = ScriptMaterial(name=b.name or f"Sub{i + 1}")
        m.properties = {k: " ".join(v) for k, v in b.properties}
        passes = [p for p in b.walk() if p.kind == "pass"]
        for p in passes[:1]:
            m.shader_group = " ".join(p.prop("shader_group") or [])
            d = p.prop("diffuse")
            if d and len(d) >= 3:
                vals = [_float(x, 1.0) for x in d[:4]] + [1.0] * (4 - min(len(d), 4))
                m.diffuse = tuple(vals[:4])
            m.scene_blend = " ".join(p.prop("scene_blend") or [])
            m.alpha_rejection = " ".join(p.prop("alpha_rejection") or [])
        if not m.shader_group:
            sg = next((blk.prop("shader_group") for blk in b.walk() if blk.prop("shader_group")),
                      None)
            m.shader_group = " ".join(sg or [])
        units = [u for p in passes[:1] for u in p.children if u.kind == "texture_unit"]
        if not passes:
            units = [u for u in b.walk() if u.kind == "texture_unit"]
        for u in units:
            tex = " ".join(u.prop("texture") or [])
            try:
                tcs = int((u.prop("tex_coord_set") or ["0"])[0])
            except ValueError:
                tcs = 0
            m.texture_units.append(TextureUnit(tex, tcs, {k: " ".join(v) for k, v in u.properties}))
        out.append(m)
    return out


def parse(data: bytes) -> list[ScriptMaterial]:
    """The materials of a script file's bytes (UTF-8, else CP949, else Latin-1)."""
    for enc in ("utf-8-sig", "cp949", "latin-1"):
        try:
            return materials_of(parse_text(data.decode(enc)))
        except UnicodeDecodeError:
            continue
    return []


def find_script(mesh_path: Path | None) -> Path | None:
    """``<stem>.txt`` beside the mesh, else in a sibling ``material`` folder (the game's layout
    is ``resource/mesh/<name>.msh`` + ``resource/material/<name>.txt``)."""
    if mesh_path is None:
        return None
    mesh_path = Path(mesh_path)
    cands = [mesh_path.with_suffix(".txt")]
    try:                                       # an unreadable folder just means no script
        parent = mesh_path.parent.parent
        if parent.is_dir():
            for d in parent.iterdir():
                if d.name.lower() == "material" and d.is_dir():
                    cands.append(d / (mesh_path.stem + ".txt"))
        for c in cands:
            if c.is_file():
                return c
    except OSError:
        pass
    return None


def write_script(materials: list[ScriptMaterial]) -> str:
    """A script the engine can parse (used by ``from_scene`` for ``<mesh>.txt``)."""
    lines = []
    for m in materials:
        lines += ["material", "{", "\ttechnique", "\t{", "\t\tpass", "\t\t{"]
        if m.shader_group:
            lines.append(f"\t\t\tshader_group {m.shader_group}")
        if m.diffuse is not None:
            lines.append("\t\t\tdiffuse " + " ".join(f"{c:g}" for c in m.diffuse))
        for u in m.texture_units:
            lines += ["\t\t\ttexture_unit", "\t\t\t{", f"\t\t\t\ttexture {u.texture}",
                      f"\t\t\t\ttex_coord_set {u.tex_coord_set}", "\t\t\t}"]
        lines += ["\t\t}", "\t}", "}", ""]
    return "\n".join(lines)
