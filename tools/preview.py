"""A quick still picture of a model: ``python3 tools/preview.py out/wiggle.glb -o wiggle.png``.

Flat-shaded triangles in the material colours (or the texture's mean colour, times the
vertex colours where a mesh has them), seen from the
front and a little above, painter's order; at several animation times side by side with
``--frames N``. Meant for a README picture or a look without a viewer, not for judging a
conversion (use Blender for that). Needs Pillow.
"""
from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import retromesh


def _colours(scene) -> list[np.ndarray]:
    out = []
    for m in scene.materials:
        c = np.array(m.base_color[:3], float)
        ref = m.base_color_texture
        if ref is not None and scene.textures[ref.texture].image:
            img = Image.open(io.BytesIO(scene.textures[ref.texture].image)).convert("RGB")
            c = c * np.asarray(img.resize((8, 8))).reshape(-1, 3).mean(0) / 255
        out.append(c)
    return out


def _posed(scene, t: float) -> np.ndarray:
    """World matrices of the nodes at time ``t`` of the first animation."""
    saved = [(n.translation.copy(), n.rotation.copy(), n.scale.copy()) for n in scene.nodes]
    if scene.animations:
        for ch in scene.animations[0].channels:
            v = np.asarray(ch.sample([t]))[0]
            setattr(scene.nodes[ch.node], ch.path, v)
    world = scene.world_matrices()
    for n, (tr, ro, sc) in zip(scene.nodes, saved):
        n.translation, n.rotation, n.scale = tr, ro, sc
    return world


def _triangles(scene, world: np.ndarray, rest: np.ndarray):
    colours = _colours(scene)
    for i, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        for p in scene.meshes[node.mesh].primitives:
            pos = np.asarray(p.positions, float)
            if node.skin is not None and p.joints is not None:
                skin = scene.skins[node.skin]
                ibm = np.asarray(skin.inverse_bind_matrices, float)
                mats = world[skin.joints] @ ibm                       # (j, 4, 4)
                h = np.c_[pos, np.ones(len(pos))]
                per = np.einsum("jab,nb->nja", mats, h)[..., :3]       # (n, j, 3)
                idx = np.asarray(p.joints, int)
                w = np.asarray(p.weights, float)
                pos = (per[np.arange(len(pos))[:, None], idx] * w[..., None]).sum(1)
            else:
                pos = pos @ world[i][:3, :3].T + world[i][:3, 3]
            tri = (np.asarray(p.indices).reshape(-1, 3) if p.indices is not None
                   else np.arange(len(pos)).reshape(-1, 3))
            c = colours[p.material] if p.material is not None else np.array([0.8, 0.8, 0.8])
            if p.colors is not None:
                # vertex colours (voxel palettes) are linear: shown as sRGB, one per triangle
                vc = np.asarray(p.colors, float)[:, :3]
                c = np.clip(vc[tri].mean(1), 0, 1) ** (1 / 2.2) * c
            yield pos[tri], c


def render(path: Path, size: int = 320, frames: int = 1) -> Image.Image:
    scene = retromesh.load(path)
    duration = scene.animations[0].duration if scene.animations else 0.0
    times = np.linspace(0, duration, frames, endpoint=False) if frames > 1 else [0.0]
    yaw, pitch = np.radians(25), np.radians(-15)
    rot = np.array([[np.cos(yaw), 0, np.sin(yaw)], [0, 1, 0], [-np.sin(yaw), 0, np.cos(yaw)]])
    rot = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)],
                    [0, np.sin(pitch), np.cos(pitch)]]) @ rot
    light = np.array([0.4, 0.7, 0.6]) / np.linalg.norm([0.4, 0.7, 0.6])
    rest = scene.world_matrices()
    shots = [list(_triangles(scene, _posed(scene, t), rest)) for t in times]
    pts = np.concatenate([tris.reshape(-1, 3) for shot in shots for tris, _ in shot]) @ rot.T
    lo, hi = pts.min(0), pts.max(0)
    scale = 0.9 * size / max(hi[0] - lo[0], hi[1] - lo[1], 1e-9)
    centre = (lo + hi) / 2
    image = Image.new("RGB", (size * len(shots), size), (38, 40, 46))
    draw = ImageDraw.Draw(image)
    for k, shot in enumerate(shots):
        polys = []
        for tris, colour in shot:
            v = tris @ rot.T
            n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
            n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
            shade = 0.25 + 0.75 * np.abs(n @ light)
            xy = (v[..., :2] - centre[:2]) * scale * [1, -1] + [size / 2 + k * size, size / 2]
            fills = np.clip(np.broadcast_to(colour, (len(v), 3)) * shade[:, None] * 255, 0, 255)
            for poly, depth, fill in zip(xy, v[..., 2].mean(1), fills.astype(int)):
                polys.append((depth, [tuple(q) for q in poly], tuple(int(x) for x in fill)))
        for _, poly, fill in sorted(polys, key=lambda p: p[0]):
            draw.polygon(poly, fill=fill)
    return image


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--frames", type=int, default=1)
    args = ap.parse_args()
    render(Path(args.model), args.size, args.frames).save(args.output, optimize=True)


if __name__ == "__main__":
    main()
