"""``info`` (counts) and ``check`` (what Blitz3D's and Irrlicht's loaders refuse or misread) of a
B3D document."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...findings import Finding, error, warning
from .chunks import AnimChunk, B3dFile, Bone, Brus, Keys, MeshChunk, NodeChunk, RawChunk, Tris, Vrts

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


#: the highest version Blitz3D loads (``Loader_B3D`` returns no model above it)
MAX_VERSION = 1
#: texture slots of a Blitz3D brush, floats of its texture-coordinate buffer, sets it keeps
BRUSH_SLOTS, TC_FLOATS, TC_SETS_KEPT = 8, 4, 2


def check(doc: B3dFile) -> list[Finding]:
    """What Blitz3D's loader refuses, crashes on or misreads (``error``), and what it or
    Irrlicht/Luanti load but show or animate wrongly (``warning``)."""
    problems: list[Finding] = []
    if doc.version > MAX_VERSION:
        problems.append(error("b3d.version", f"version {doc.version}: Blitz3D loads version "
                              f"{MAX_VERSION} only (the format's major version is "
                              f"{doc.version // 100}, not 0)"))
    n_tex, n_brush = len(doc.textures), len(doc.brushes)
    for c in doc.children:
        if isinstance(c, Brus) and c.n_texs > BRUSH_SLOTS:
            problems.append(error("b3d.brush_slots", f"BRUS n_texs {c.n_texs}: Blitz3D reads "
                                  f"them into {BRUSH_SLOTS} slots (memory overrun)"))
    for bi, b in enumerate(doc.brushes):
        bad = [t for t in b.texture_ids if not -1 <= t < n_tex]
        if bad:
            problems.append(warning("b3d.brush_texture", f"brush {bi} ({b.name!r}) refers to "
                                    f"textures {bad} of {n_tex} (Irrlicht ignores them)"))
    last_count: int | None = None
    for node, _ in doc.walk():
        label = node.name.decode("latin-1")
        kinds = {type(c) for c in node.children}
        if MeshChunk in kinds and Bone in kinds:
            problems.append(error("b3d.mesh_bone", f"node {label!r} is both a MESH and a BONE: "
                                  "Blitz3D makes it the bone and leaves its mesh out of the model "
                                  "(Irrlicht skins the mesh to its own node)"))
        for c in node.children:
            if isinstance(c, MeshChunk):
                v = c.vrts
                last_count = 0 if v is None else len(v.vertices)
                problems += _mesh_problems(label, c, n_brush, last_count)
            elif isinstance(c, Bone):
                if last_count is None:
                    problems.append(error("b3d.bone_before_mesh", f"node {label!r}: BONE before "
                                          "any MESH"))
                elif len(c.weights) and (c.weights["vertex"].min() < 0
                                         or c.weights["vertex"].max() >= last_count):
                    problems.append(error("b3d.bone_vertex", f"node {label!r}: BONE vertex id out "
                                          f"of 0..{last_count - 1}"))
                if len(c.weights) == 1:
                    problems.append(warning("b3d.single_weight", f"node {label!r}: BONE with a "
                                            "single weight (ignored by Irrlicht/Minetest)"))
            elif isinstance(c, Keys):
                if c.flags & ~7:
                    problems.append(error("b3d.keys_flags", f"node {label!r}: KEYS flags "
                                          f"{c.flags} has unknown bits"))
    problems.extend(_zero_weight_warnings(doc))
    return problems


def _mesh_problems(label: str, c: MeshChunk, n_brush: int, count: int) -> list[Finding]:
    out: list[Finding] = []
    v = c.vrts
    if v is None:
        out.append(error("b3d.mesh_vrts", f"node {label!r}: MESH without VRTS"))
    else:
        if v.tex_coord_set_size > TC_FLOATS:
            out.append(error("b3d.tex_coord_size", f"node {label!r}: VRTS tex_coord_set_size "
                             f"{v.tex_coord_set_size}: Blitz3D reads each set into "
                             f"{TC_FLOATS} floats (memory overrun)"))
        if v.tex_coord_sets > TC_SETS_KEPT:
            out.append(warning("b3d.tex_coord_sets", f"node {label!r}: {v.tex_coord_sets} "
                               f"texture-coordinate sets: Blitz3D uses the first "
                               f"{TC_SETS_KEPT}, Irrlicht refuses more than 2"))
    if not (-1 <= c.brush_id < n_brush):
        out.append(error("b3d.mesh_brush", f"node {label!r}: MESH brush {c.brush_id} of "
                         f"{n_brush}: Illegal brush ID found (Irrlicht; Blitz3D reads past "
                         "its brushes)"))
    for t in c.tris:
        if len(t.triangles) and (t.triangles.min() < 0 or t.triangles.max() >= count):
            out.append(error("b3d.tris_index", f"node {label!r}: TRIS index out of "
                             f"0..{count - 1}: Illegal vertex index found (Irrlicht)"))
        if not (-1 <= t.brush_id < n_brush):
            out.append(error("b3d.tris_brush", f"node {label!r}: TRIS brush {t.brush_id} of "
                             f"{n_brush}: Illegal material index found (Irrlicht; Blitz3D reads "
                             "past its brushes)"))
    return out


def _zero_weight_warnings(doc: B3dFile) -> list[Finding]:
    """Vertices named by BONE entries that all weigh 0: Blitz3D moves them with their bone,
    Irrlicht/Luanti and Blender leave them still (to_scene follows Blitz3D; weights=raw)."""
    out: list[Finding] = []
    named: np.ndarray | None = None
    positive: np.ndarray | None = None
    mesh_label = ""

    def flush():
        if named is not None and (named & ~positive).any():
            out.append(warning("b3d.zero_weights", f"mesh {mesh_label!r}: "
                               f"{int((named & ~positive).sum())} vertices have only zero BONE "
                               "weights (Blitz3D animates them, Irrlicht does not)"))
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
