"""``info`` (counts) and ``check`` (structural problems a loader would trip over) of a B3D document."""
from __future__ import annotations

from typing import Any

import numpy as np

from .chunks import AnimChunk, B3dFile, Bone, Keys, MeshChunk, NodeChunk, RawChunk, Tris, Vrts

__all__ = ["info", "check"]


def info(doc: B3dFile) -> dict[str, Any]:
    chunks = list(doc.chunks())
    meshes = [c for c in chunks if isinstance(c, MeshChunk)]
    return {
        "version": doc.version,
        "nodes": sum(isinstance(c, NodeChunk) for c in chunks),
        "meshes": len(meshes),
        "vertices": sum(len(c.vertices) for c in chunks if isinstance(c, Vrts)),
        "triangles": sum(len(c.triangles) for c in chunks if isinstance(c, Tris)),
        "bones": sum(isinstance(c, Bone) for c in chunks),
        "weights": sum(len(c.weights) for c in chunks if isinstance(c, Bone)),
        "keys": sum(len(c.keys) for c in chunks if isinstance(c, Keys)),
        "animations": sum(isinstance(c, AnimChunk) for c in chunks),
        "textures": len(doc.textures),
        "brushes": len(doc.brushes),
        "unknown chunks": sum(isinstance(c, RawChunk) for c in chunks),
    }


def check(doc: B3dFile) -> list[str]:
    """Structural problems a loader would trip over (the file still round-trips).

    Entries starting with ``warning:`` are quirks engines tolerate; the others are errors."""
    problems: list[str] = []
    n_tex, n_brush = len(doc.textures), len(doc.brushes)
    for bi, b in enumerate(doc.brushes):
        bad = [t for t in b.texture_ids if not -1 <= t < n_tex]
        if bad:
            problems.append(f"warning: brush {bi} ({b.name!r}) refers to textures {bad} of "
                            f"{n_tex} (ignored)")
    last_count: int | None = None
    for node, _ in doc.walk():
        label = node.name.decode("latin-1")
        for c in node.children:
            if isinstance(c, MeshChunk):
                v = c.vrts
                last_count = 0 if v is None else len(v.vertices)
                if v is None:
                    problems.append(f"node {label!r}: MESH without VRTS")
                if not (-1 <= c.brush_id < n_brush):
                    problems.append(f"node {label!r}: MESH brush {c.brush_id} of {n_brush}")
                for t in c.tris:
                    if len(t.triangles) and (t.triangles.min() < 0 or t.triangles.max() >= last_count):
                        problems.append(f"node {label!r}: TRIS index out of 0..{last_count - 1}")
                    if not (-1 <= t.brush_id < n_brush):
                        problems.append(f"node {label!r}: TRIS brush {t.brush_id} of {n_brush}")
            elif isinstance(c, Bone):
                if last_count is None:
                    problems.append(f"node {label!r}: BONE before any MESH")
                elif len(c.weights) and (c.weights["vertex"].min() < 0
                                         or c.weights["vertex"].max() >= last_count):
                    problems.append(f"node {label!r}: BONE vertex id out of 0..{last_count - 1}")
                if len(c.weights) == 1:
                    problems.append(f"warning: node {label!r}: BONE with a single weight "
                                    "(ignored by Irrlicht/Minetest)")
            elif isinstance(c, Keys):
                if c.flags & ~7:
                    problems.append(f"node {label!r}: KEYS flags {c.flags} has unknown bits")
    problems.extend(_zero_weight_warnings(doc))
    return problems


def _zero_weight_warnings(doc: B3dFile) -> list[str]:
    """Vertices named by BONE entries that all weigh 0: Blitz3D moves them with their bone,
    Irrlicht/Luanti and Blender leave them still (to_scene follows Blitz3D; weights=raw)."""
    out: list[str] = []
    named: np.ndarray | None = None
    positive: np.ndarray | None = None
    mesh_label = ""

    def flush():
        if named is not None and (named & ~positive).any():
            out.append(f"warning: mesh {mesh_label!r}: {int((named & ~positive).sum())} vertices "
                       "have only zero BONE weights (Blitz3D animates them, Irrlicht does not)")
    for node, _ in doc.walk():
        for c in node.children:
            if isinstance(c, MeshChunk):
                flush()
                n = len(c.vrts.vertices) if c.vrts is not None else 0
                named, positive = np.zeros(n, bool), np.zeros(n, bool)
                mesh_label = node.name.decode("latin-1")
            elif isinstance(c, Bone) and named is not None and positive is not None \
                    and len(c.weights):
                v = c.weights["vertex"]
                ok = (v >= 0) & (v < len(named))
                named[v[ok]] = True
                positive[v[ok & (c.weights["weight"] > 0)]] = True
    flush()
    return out
