"""What ``retromesh info`` and ``retromesh formats`` say.

``info`` reads the native counts from the format's ``info`` and everything a user asks next —
names, textures (found or missing), bounding box, animations with their lengths — from the
same :func:`retromesh.load` that ``convert`` uses, with the same companion files.
"""
from __future__ import annotations

import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..errors import LossWarning, MissingTextureWarning
from ..scene import Scene
from .messages import cli_hints
from .options import GENERIC_READ, GENERIC_WRITE, read_options, write_options

__all__ = ["native_info", "scene_info", "format_entries", "format_blocks", "info_lines"]


def native_info(fmt: registry.Format, doc: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"format": fmt.name}
    if fmt.info is not None:
        entry.update(fmt.info(doc))
    return entry


def _bbox(scene: Scene) -> dict[str, list[float]] | None:
    if not scene.nodes:
        return None
    world = scene.world_matrices()
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for i, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        m = world[i]
        for p in scene.meshes[node.mesh].primitives:
            if not len(p.positions):
                continue
            pts = np.asarray(p.positions, np.float64) @ m[:3, :3].T + m[:3, 3]
            lo = np.minimum(lo, pts.min(0))
            hi = np.maximum(hi, pts.max(0))
    if not np.all(np.isfinite(lo)):
        return None
    return {"min": [round(float(v), 4) for v in lo], "max": [round(float(v), 4) for v in hi]}


def _texture_status(scene: Scene, source: Path | None, missing: set[str]) -> list[dict[str, str]]:
    out = []
    folder = source.parent if source is not None else None
    for t in scene.textures:
        name = t.uri or t.name or "(unnamed)"
        if t.image is not None:
            status = "embedded"
        elif t.uri and (t.uri in missing or Path(t.uri).name in missing):
            status = "missing"
        elif t.uri and folder is not None:
            cand = folder / t.uri
            lower = Path(t.uri).name.lower()
            found = cand.is_file() or (cand.parent.is_dir() and any(
                c.name.lower() == lower for c in cand.parent.iterdir()))
            status = "found" if found else "missing"
        else:
            status = "missing" if t.uri else "none"
        out.append({"name": name, "status": status})
    return out


def scene_info(source: Path, format: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """Figures of the scene ``retromesh.load(source, **options)`` gives (what convert writes)."""
    import retromesh
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossWarning)
        scene = retromesh.load(source, format=format, **options)
    counts = scene.counts()
    counts["keys"] = sum(len(c.times) for a in scene.animations for c in a.channels)
    missing = {w.message.name for w in caught if isinstance(w.message, MissingTextureWarning)}
    return {
        **counts,
        "mesh_names": [m.name for m in scene.meshes],
        "material_names": [m.name for m in scene.materials],
        "texture_files": _texture_status(scene, source, missing),
        "bounding_box": _bbox(scene),
        "animation_clips": [{"name": a.name, "seconds": round(a.duration, 4),
                             "channels": len(a.channels)} for a in scene.animations],
        "notes": sorted({cli_hints(str(w.message)) for w in caught
                         if issubclass(w.category, LossWarning)}),
        **_luanti_info(scene),
    }


def _luanti_info(scene: Any) -> dict[str, Any]:
    """The Luanti registrations using the model (a model in a mod read with ``mods=``)."""
    from ..luanti.scene import summary
    regs = summary(scene)
    return {"luanti_registrations": regs} if regs else {}


def format_entries() -> list[dict[str, Any]]:
    """Every registered format as plain data (``retromesh formats --json``)."""
    out = []
    for f in registry.formats():
        s = f.supports()
        out.append({
            "name": f.name, "family": f.family, "description": f.description,
            "extensions": ["." + e for e in f.extensions],
            "supports": s,
            "companions": ["." + c for c in f.companion_names()],
            "read_options": sorted(read_options(f)) if f.to_scene else [],
            "write_options": sorted(write_options(f)) if s["from_scene"] else [],
        })
    return out


def format_blocks(width: int = 80) -> list[str]:
    """One short block per format that fits ``width`` columns."""
    lines: list[str] = []
    width = max(width, 40)
    wrap = textwrap.TextWrapper(width=width, initial_indent="    ", subsequent_indent="      ",
                                break_long_words=False, break_on_hyphens=False)
    lines += textwrap.wrap("Every format: --set scale=N (or --scale N). glTF output: -O "
                           "embed_images=false (--no-embed-images), -O texture_path=[DIR] "
                           "(--texture-path DIR).", width=width, break_long_words=False,
                           break_on_hyphens=False)
    generic = set(GENERIC_READ) | set(GENERIC_WRITE)
    for e in format_entries():
        e = {**e, "read_options": [o for o in e["read_options"] if o not in generic],
             "write_options": [o for o in e["write_options"] if o not in generic]}
        can = [k for k, v in (("read", "read"), ("write", "write"), ("to_scene", "to glTF"),
                              ("from_scene", "from glTF")) if e["supports"][k]]
        labels = dict(read="read", write="write", to_scene="to glTF", from_scene="from glTF")
        exts = " ".join(e["extensions"])
        if not e["extensions"]:
            exts = f"--format {e['name']}"
        head = f"{e['name']} ({exts}): {e['description']}"
        lines += textwrap.wrap(head, width=width, subsequent_indent="    ",
                               break_long_words=False, break_on_hyphens=False)
        lines += wrap.wrap("can: " + (", ".join(labels[k] for k in can) or "nothing (recognised)"))
        if e["companions"]:
            lines += wrap.wrap("reads beside it: " + " ".join(e["companions"]))
        if e["read_options"]:
            lines += wrap.wrap("--set: " + ", ".join(e["read_options"]))
        if e["write_options"]:
            lines += wrap.wrap("-O: " + ", ".join(e["write_options"]))
    return lines


def format_table() -> list[str]:
    """The Markdown table of every registered format (``retromesh formats --markdown``; the
    table in docs/formats.md is this output, a test compares them)."""
    rows = ["| format | family | extensions | can | reads beside it |", "|---|---|---|---|---|"]
    labels = dict(read="read", write="write", to_scene="to glTF", from_scene="from glTF")
    for e in format_entries():
        exts = " ".join(f"`{x}`" for x in e["extensions"]) or f"`--format {e['name']}`"
        can = ", ".join(v for k, v in labels.items() if e["supports"][k]) or "recognised"
        beside = " ".join(f"`{c}`" for c in e["companions"]) or "—"
        rows.append(f"| `{e['name']}` | {e['family']} | {exts} | {can} | {beside} |")
    return rows


def _fmt_counts(counts: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if k != "format")


def info_lines(name: str, entry: dict[str, Any], width: int) -> list[str]:
    head = f"{name} ({entry.get('format', '?')})"
    lines = [head] if len(head) <= width else [name, f"  ({entry.get('format', '?')})"]
    rows: list[tuple[str, str]] = []
    native = {k: v for k, v in entry.items() if k not in ("format", "scene", "companions")}
    if entry.get("companions"):
        rows.append(("read with", ", ".join(entry["companions"])))
    rows.append(("native", _fmt_counts(native)))
    scene = entry.get("scene")
    if isinstance(scene, str):
        rows.append(("scene", scene))
    elif isinstance(scene, dict):
        rows.append(("scene", _fmt_counts({k: v for k, v in scene.items()
                                           if isinstance(v, int)})))
        for key, label in (("mesh_names", "meshes"), ("material_names", "materials")):
            if scene[key]:
                rows.append((label, ", ".join(n or "(unnamed)" for n in scene[key])))
        if scene["texture_files"]:
            rows.append(("textures", ", ".join(f"{t['name']} ({t['status']})"
                                                for t in scene["texture_files"])))
        bb = scene["bounding_box"]
        if bb:
            def v(xs):
                return "(" + ", ".join(f"{x:g}" for x in xs) + ")"
            rows.append(("bounds", f"min {v(bb['min'])} max {v(bb['max'])}"))
        for a in scene["animation_clips"]:
            rows.append(("animation", f"{a['name'] or '(unnamed)'}: {a['seconds']:g} s, "
                                      f"{a['channels']} channels"))
        for r in scene.get("luanti_registrations", []):
            sets = "; ".join(", ".join(t or '""' for t in ts) for ts in r["textures"])
            clips = ", ".join(f"{k} {v:g} s" for k, v in r["clips"].items())
            rows.append(("luanti", f"{r['name']} ({r['api']}): textures {sets or '-'}; "
                                   f"clips {clips or '-'}"))
        for n in scene["notes"]:
            rows.append(("warning", n))
    for label, text in rows:
        lines += textwrap.wrap(text, width=width, initial_indent=f"  {label:<10} ",
                               subsequent_indent=" " * 13, break_long_words=False,
                               break_on_hyphens=False) or [f"  {label}"]
    return lines
