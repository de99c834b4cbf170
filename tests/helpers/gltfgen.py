"""Valid glTF 2.0 scenes of many kinds, built as GLB bytes for writer tests: morph targets
and their weight animations, many UV sets, points and lines, cameras, sparse accessors,
skins or none, hierarchies, every interpolation. :func:`spec` is a hypothesis strategy of
the choices; :func:`glb` makes the file of one."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import strategies as st

from retromesh.gltf.container import pack

_F, _U16, _U8 = 5126, 5123, 5121
_TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}


class _Builder:
    def __init__(self) -> None:
        self.bin = bytearray()
        self.doc: dict[str, Any] = {"asset": {"version": "2.0"}, "buffers": [], "bufferViews": [],
                                    "accessors": []}

    def view(self, data: bytes, target: int | None = None) -> int:
        while len(self.bin) % 4:
            self.bin.append(0)
        v = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if target:
            v["target"] = target
        self.bin += data
        self.doc["bufferViews"].append(v)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, a: np.ndarray, *, target: int | None = None, minmax: bool = False,
                 normalized: bool = False) -> int:
        a = np.ascontiguousarray(a)
        width = 1 if a.ndim == 1 else int(np.prod(a.shape[1:]))
        ctype = {np.float32: _F, np.uint16: _U16, np.uint8: _U8}[a.dtype.type]
        acc: dict[str, Any] = {"bufferView": self.view(a.tobytes(), target), "componentType": ctype,
                               "count": len(a), "type": _TYPES[width]}
        if normalized:
            acc["normalized"] = True
        if minmax:
            flat = a.reshape(len(a), -1)
            acc["min"] = [float(v) for v in flat.min(axis=0)]
            acc["max"] = [float(v) for v in flat.max(axis=0)]
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1

    def sparse(self, count: int, idx: np.ndarray, values: np.ndarray) -> int:
        """A VEC3 float accessor of zeros but ``values`` at ``idx`` (no bufferView)."""
        acc = {"componentType": _F, "count": count, "type": "VEC3",
               "sparse": {"count": len(idx),
                          "indices": {"bufferView": self.view(idx.astype(np.uint16).tobytes()),
                                      "componentType": _U16},
                          "values": {"bufferView": self.view(values.astype(np.float32).tobytes())}}}
        full = np.zeros((count, 3), np.float32)
        full[idx] = values
        acc["min"] = [float(v) for v in full.min(axis=0)]
        acc["max"] = [float(v) for v in full.max(axis=0)]
        self.doc["accessors"].append(acc)
        return len(self.doc["accessors"]) - 1


@st.composite
def spec(draw) -> dict[str, Any]:
    """The choices of one scene (all JSON-able, shrinkable)."""
    prims = draw(st.lists(st.fixed_dictionaries({
        "mode": st.sampled_from([0, 1, 2, 3, 4, 4, 4, 5, 6]),
        "vertices": st.integers(3, 9), "indexed": st.booleans(), "normals": st.booleans(),
        "uv_sets": st.integers(0, 4), "colour": st.sampled_from([None, 3, 4]),
        "targets": st.integers(0, 2), "sparse": st.booleans(), "material": st.booleans()}),
        min_size=0, max_size=3))
    n_nodes = draw(st.integers(1, 5))
    return {"seed": draw(st.integers(0, 2 ** 16)), "prims": prims,
            "meshes": draw(st.integers(1, 2)) if prims else 0,
            "parents": [draw(st.integers(-1, i - 1)) for i in range(n_nodes)],
            "skin": draw(st.booleans()), "camera": draw(st.booleans()),
            "anims": draw(st.lists(st.fixed_dictionaries({
                "path": st.sampled_from(["translation", "rotation", "scale", "weights"]),
                "interpolation": st.sampled_from(["LINEAR", "STEP", "CUBICSPLINE"]),
                "keys": st.integers(1, 4), "node": st.integers(0, 9)}), max_size=4)),
            "scene_extras": draw(st.booleans())}


def _primitive(b: _Builder, p: dict, rng: np.random.Generator) -> tuple[dict, int]:
    n = p["vertices"]
    pos = rng.uniform(-2, 2, (n, 3)).astype(np.float32)
    attrs = {"POSITION": b.accessor(pos, target=34962, minmax=True)}
    if p["normals"]:
        nrm = rng.normal(size=(n, 3))
        nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
        attrs["NORMAL"] = b.accessor(nrm.astype(np.float32), target=34962)
    for k in range(p["uv_sets"]):
        attrs[f"TEXCOORD_{k}"] = b.accessor(rng.uniform(0, 1, (n, 2)).astype(np.float32), target=34962)
    if p["colour"]:
        attrs["COLOR_0"] = b.accessor(rng.uniform(0, 1, (n, p["colour"])).astype(np.float32), target=34962)
    out: dict[str, Any] = {"attributes": attrs, "mode": p["mode"]}
    if p["indexed"]:
        per = {0: 1, 1: 2, 2: 1, 3: 1, 4: 3, 5: 1, 6: 1}[p["mode"]]
        count = max(per, (n // per) * per) if p["mode"] in (1, 4) else n
        count = count if p["mode"] not in (5, 6) else max(3, n)
        idx = rng.integers(0, n, count).astype(np.uint16)
        out["indices"] = b.accessor(idx, target=34963)
    elif p["mode"] == 4 and n % 3:
        out["mode"] = 0                   # an unindexed triangle list needs 3k vertices
    elif p["mode"] == 1 and n % 2:
        out["mode"] = 3
    targets = []
    for t in range(p["targets"]):
        if p["sparse"] and t == 0:
            idx = np.unique(rng.integers(0, n, 2))
            targets.append({"POSITION": b.sparse(n, idx, rng.uniform(-0.5, 0.5, (len(idx), 3)))})
        else:
            targets.append({"POSITION": b.accessor(rng.uniform(-0.5, 0.5, (n, 3)).astype(np.float32),
                                                   minmax=True)})
    if targets:
        out["targets"] = targets
    if p["material"]:
        out["material"] = 0
    return out, len(targets)


def glb(s: dict[str, Any]) -> bytes:
    """The GLB of one :func:`spec` (valid glTF 2.0)."""
    rng = np.random.default_rng(s["seed"])
    b = _Builder()
    doc = b.doc
    meshes: list[dict] = []
    mesh_targets: list[int] = []
    for m in range(s["meshes"]):
        prims = [_primitive(b, p, rng) for p in s["prims"]]
        # every primitive of a mesh has the same number of morph targets
        n_t = min(t for _, t in prims)
        for pr, _ in prims:
            if "targets" in pr:
                pr["targets"] = pr["targets"][:n_t] or pr.pop("targets")
        mesh: dict[str, Any] = {"name": f"mesh{m}", "primitives": [pr for pr, _ in prims]}
        if n_t:
            mesh["weights"] = [0.0] * n_t
        meshes.append(mesh)
        mesh_targets.append(n_t)
    if meshes:
        doc["meshes"] = meshes
    if any(p["material"] for p in s["prims"]):
        doc["materials"] = [{"name": "m", "pbrMetallicRoughness": {"baseColorFactor": [1, 0.5, 0.2, 1]}}]
    nodes: list[dict[str, Any]] = []
    for i, parent in enumerate(s["parents"]):
        node: dict[str, Any] = {"name": f"node{i}", "translation": [float(v) for v in rng.uniform(-1, 1, 3)]}
        if meshes and i < len(meshes) * 2:
            node["mesh"] = i % len(meshes)
        nodes.append(node)
        if parent >= 0:
            nodes[parent].setdefault("children", []).append(i)
    roots = [i for i, p in enumerate(s["parents"]) if p < 0]
    if s["camera"]:
        doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}]
        nodes.append({"name": "camera", "camera": 0})
        roots.append(len(nodes) - 1)
    if s["skin"] and meshes:
        joints = [i for i in range(len(s["parents"]))]
        ibm = np.repeat(np.eye(4, dtype=np.float32)[None], len(joints), 0)
        for k, j in enumerate(joints):
            ibm[k, 3, :3] = -np.asarray(_world(nodes, j), np.float32)
        doc["skins"] = [{"joints": joints, "inverseBindMatrices": b.accessor(ibm.reshape(-1, 16))}]
        skinned = _skin_mesh(b, doc, nodes, meshes, s, rng, len(joints))
        if skinned is not None:
            nodes.append({"name": "skinned", "mesh": skinned, "skin": 0})
            roots.append(len(nodes) - 1)
    doc["nodes"] = nodes
    doc["scenes"] = [{"nodes": roots}]
    if s["scene_extras"]:
        doc["scenes"][0]["extras"] = {"note": "made by gltfgen"}
    doc["scene"] = 0
    _animations(b, doc, s, mesh_targets, rng)
    doc["buffers"] = [{"byteLength": len(b.bin)}]
    return pack(json.dumps(doc).encode("utf-8"), bytes(b.bin))


def _world(nodes: list[dict], j: int) -> list[float]:
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    t = np.zeros(3)
    while j is not None:
        t += nodes[j].get("translation", [0, 0, 0])
        j = parent.get(j)
    return list(t)


def _skin_mesh(b: _Builder, doc: dict, nodes: list[dict], meshes: list[dict], s: dict,
               rng: np.random.Generator, joints: int) -> int | None:
    """A triangle mesh skinned to the joints (a mesh of its own: skinned nodes' meshes all
    carry JOINTS_0/WEIGHTS_0)."""
    n = 6
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    j = rng.integers(0, joints, (n, 4)).astype(np.uint8)
    w = rng.uniform(0, 1, (n, 4)).astype(np.float32)
    w /= w.sum(axis=1, keepdims=True)
    w[:, 0] += 1.0 - w.sum(axis=1)
    prim = {"attributes": {"POSITION": b.accessor(pos, target=34962, minmax=True),
                           "JOINTS_0": b.accessor(j, target=34962),
                           "WEIGHTS_0": b.accessor(w, target=34962)},
            "indices": b.accessor(np.arange(n, dtype=np.uint16), target=34963)}
    meshes.append({"name": "skinned", "primitives": [prim]})
    return len(meshes) - 1


def _animations(b: _Builder, doc: dict, s: dict, mesh_targets: list[int], rng: np.random.Generator) -> None:
    nodes = doc["nodes"]
    anims: list[dict] = []
    for k, a in enumerate(s["anims"]):
        ni = a["node"] % len(nodes)
        width = {"translation": 3, "rotation": 4, "scale": 3}.get(a["path"])
        if a["path"] == "weights":
            mi = nodes[ni].get("mesh")
            if mi is None or mi >= len(mesh_targets) or not mesh_targets[mi]:
                continue
            width = mesh_targets[mi]
        n = a["keys"]
        times = np.cumsum(rng.uniform(0.1, 0.5, n)).astype(np.float32)
        vals = rng.uniform(-1, 1, (n, width)).astype(np.float32)
        if a["path"] == "rotation":
            vals /= np.linalg.norm(vals, axis=1, keepdims=True)
        if a["path"] == "weights":
            vals = np.abs(vals)
        if a["interpolation"] == "CUBICSPLINE":
            tangents = np.zeros_like(vals)
            vals = np.stack([tangents, vals, tangents], axis=1).reshape(3 * n, width)
        out = vals.reshape(-1) if a["path"] == "weights" else vals
        sampler = {"input": b.accessor(times, minmax=True), "output": b.accessor(out),
                   "interpolation": a["interpolation"]}
        anims.append({"name": f"anim{k}", "samplers": [sampler],
                      "channels": [{"sampler": 0, "target": {"node": ni, "path": a["path"]}}]})
    if anims:
        doc["animations"] = anims
