"""Independent checks of the Overgrowth scene conversion against the engine's own formulas.

Written from format-facts A2/A3/A6 (Overgrowth ``GetBoneMat``, ``Animation::GetMatrices``,
``BlendFourBones`` with the engine's ``Slerp``, skin matrix ``anim_world * inverse(bind)``), one
bone and one sample at a time, without the module's vectorised helpers.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from retromesh.formats.overgrowth import samples
from retromesh.transforms import compose_trs, matrix_to_quat, quat_to_matrix, world_matrices


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("overgrowth_engine")
    samples.write_example(d)
    return d


def _get_bone_mat(s, e):
    d = (e - s) / np.linalg.norm(e - s)
    up = np.array([0.0, 0.0, 1.0])
    if abs(up @ d) > 0.95:
        up = np.array([1.0, 0.0, 0.0])
    r = np.cross(up, d)
    r /= np.linalg.norm(r)
    u = np.cross(d, r)
    u /= np.linalg.norm(u)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = r, u, d, (s + e) / 2
    return m


def _engine_slerp(a, b, t):
    c = float(a @ b)
    if c < 0:
        c, b = -c, -b
    if 1 - c > 0.01:
        om = np.arccos(c)
        return np.sin((1 - t) * om) / np.sin(om) * a + np.sin(t * om) / np.sin(om) * b
    return (1 - t) * a + t * b


def _bt(m):                                   # mat4 -> BoneTransform (origin, xyzw)
    return m[:3, 3].copy(), matrix_to_quat(m[:3, :3])


def _bt_mul(a, b):
    return quat_to_matrix(a[1])[:3, :3] @ b[0] + a[0], _qmul(a[1], b[1])


def _bt_inv(a):
    qi = a[1] * [-1, -1, -1, 1]
    return -(quat_to_matrix(qi)[:3, :3] @ a[0]), qi


def _qmul(a, b):
    x1, y1, z1, w1 = a
    x2, y2, z2, w2 = b
    return np.array([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2])


def _get_matrices(anm, parents, local_time):
    """``Animation::GetMatrices`` for one time: parent-relative (origin, rotation) per bone."""
    kf, n, length = anm.keyframes, len(anm.keyframes), anm.length - anm.start_ms
    mats = [[_bt(m) for m in np.swapaxes(np.asarray(k.bone_mats, float).reshape(-1, 4, 4), 1, 2)]
            for k in kf]
    fid = -1
    for i in range(n):
        if kf[i].time - anm.start_ms <= local_time:
            fid = i
    if anm.is_looping:
        fr = [(fid + n + i - 1) % n for i in range(4)]
    else:
        fr = [min(n - 1, max(0, fid + i - 1)) for i in range(4)]
    interp = 0.0
    if fr[1] != fr[2]:
        ft = kf[fr[1]].time - anm.start_ms
        ft = ft - length if ft > local_time else ft
        nt = kf[fr[2]].time - anm.start_ms
        nt = nt + length if nt < local_time else nt
        interp = (local_time - ft) / (nt - ft)
    t = max(0.0, min(1.0, interp))
    w = [0.5 * (-t ** 3 + 2 * t * t - t), 0.5 * (3 * t ** 3 - 5 * t * t + 2),
         0.5 * (-3 * t ** 3 + 4 * t * t + t), 0.5 * (t ** 3 - t * t)]
    out = []
    for b in range(len(parents)):
        trs = [_bt_mul(_bt_inv(mats[f][parents[b]]), mats[f][b]) if parents[b] >= 0 else mats[f][b]
               for f in fr]
        x = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))
        total = w[0] + w[1]
        if total > 0:
            x = (trs[0][0] + (trs[1][0] - trs[0][0]) * w[1] / total,
                 _engine_slerp(trs[0][1], trs[1][1], w[1] / total))
        for j in (2, 3):
            total += w[j]
            if total > 0:
                r = w[j] / total
                x = (x[0] + (trs[j][0] - x[0]) * r, _engine_slerp(x[1], trs[j][1], r))
        out.append(x)
    return out


@pytest.mark.parametrize("name", ["wave", "walk"])
def test_playback_matches_get_matrices(files, name):
    """The resampled LINEAR channels hit the engine's Catmull-Rom curve at every sample."""
    anm = retromesh.read(files / f"{name}.anm")
    parents = np.asarray(retromesh.read(files / "stick.phxbn").control.hier_parents)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = retromesh.load(files / "stick.phxbn", animations=[files / f"{name}.anm"])
    anim, joints = scene.animations[0], scene.skins[0].joints
    times = anim.channels[0].times.astype(float)
    assert np.diff(times).max() < 1 / 30 + 1e-4               # 30 Hz by default, plus the keys
    for lt in times[1:-1:3] * 1000:
        ref = _get_matrices(anm, parents, lt)
        for b, node in enumerate(joints):
            ch = {c.path: c for c in anim.channels if c.node == node}
            t = ch["translation"].sample([lt / 1000])[0]
            q = ch["rotation"].sample([lt / 1000])[0]
            rq = ref[b][1] / np.linalg.norm(ref[b][1])
            assert np.allclose(t, ref[b][0], atol=2e-4)
            assert min(np.abs(q - rq).max(), np.abs(q + rq).max()) < 2e-4


def _glb_pose(scene, anim, t):
    local = np.stack([n.matrix for n in scene.nodes])
    vals: dict = {}
    for c in anim.channels:
        vals.setdefault(c.node, {})[c.path] = c.sample([t])[0]
    for ni, d in vals.items():
        n = scene.nodes[ni]
        local[ni] = compose_trs(d.get("translation", n.translation), d.get("rotation", n.rotation),
                                d.get("scale", n.scale))
    return world_matrices(local, scene.parents())


def test_skinned_corners_match_engine_skinning(files, tmp_path):
    """At every key: sum_k w_k A_k inverse(GetBoneMat_k) (p - old_center), with root motion
    T(center_offset) RotY(rotation) for the centered walk, equals what the glTF renders."""
    out = tmp_path / "stick.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(files / "stick.phxbn", out, mesh=files / "stick.obj",
                          animations=[files / "wave.anm", files / "walk.anm"])
    skel = retromesh.read(files / "stick.phxbn")
    P, E = np.asarray(skel.points, float), np.asarray(skel.bone_ends)
    B = np.array([_get_bone_mat(P[a], P[b]) for a, b in E])
    text = (files / "stick.obj").read_text().splitlines()
    V = np.array([[float(x) for x in ln.split()[1:4]] for ln in text if ln.startswith("v ")])
    corners = [int(tok.split("/")[0]) - 1 for ln in text if ln.startswith("f ")
               for tok in ln.split()[1:]]
    pc = V[corners]
    pc = pc - (pc.min(0) + pc.max(0)) / 2                      # _MDL_CENTER
    W = np.asarray(skel.control.weights, float).copy()
    J = np.asarray(skel.control.ids).astype(int)
    for i in np.nonzero(W.sum(1) < 0.99)[0]:                   # closest bone, weight 1
        def dist(b, x=pc[i]):
            a, d = P[E[b, 0]], P[E[b, 1]] - P[E[b, 0]]
            return np.linalg.norm(x - (a + np.clip((x - a) @ d / (d @ d), 0, 1) * d))
        J[i, 0], W[i, 0] = min(range(len(E)), key=dist), 1.0
    W /= W.sum(1, keepdims=True)
    scene = retromesh.load(out)
    mesh_node = next(i for i, n in enumerate(scene.nodes) if n.skin is not None)
    skin = scene.skins[scene.nodes[mesh_node].skin]
    prim = scene.meshes[scene.nodes[mesh_node].mesh].primitives[0]
    pos = np.c_[prim.positions.astype(float), np.ones(len(prim.positions))]
    for anim in scene.animations:
        anm = retromesh.read(files / f"{anim.name}.anm")
        for kf in anm.keyframes:
            A = np.swapaxes(np.asarray(kf.bone_mats, float).reshape(-1, 4, 4), 1, 2)
            eng = sum(W[:, k:k + 1] * np.einsum("nij,nj->ni", A[J[:, k]] @ np.linalg.inv(B[J[:, k]]),
                                                np.c_[pc, np.ones(len(pc))]) for k in range(4))
            if anm.is_centered:
                h = kf.rotation / 2
                eng = eng @ compose_trs(list(kf.center_offset), [0, np.sin(h), 0, np.cos(h)],
                                        [1, 1, 1]).T
            jm = _glb_pose(scene, anim, kf.time / 1000)[skin.joints] @ skin.inverse_bind_matrices
            g = sum(prim.weights[:, k:k + 1] * np.einsum("nij,nj->ni", jm[prim.joints[:, k]], pos)
                    for k in range(4))
            assert np.allclose(g[prim.indices.astype(int), :3], eng[:, :3], atol=1e-5)


@pytest.mark.parametrize("kw", [dict(version=8, looping=False, start=50), dict(version=5, keys=3),
                                dict(version=0, keys=5, length=900),
                                dict(version=10, looping=False, keys=2)], ids=str)
def test_playback_matches_get_matrices_all_branches(kw):
    """Non-looping (clamped keys), start offsets (v1..v10), version 0 (always looping)."""
    skel = samples.stick_skeleton()
    anm = samples.anm_fixture(weapons=False, **kw)
    from retromesh.formats.overgrowth import scene as wscene
    scene = wscene.phxbn_to_scene(skel, animations=[{"a": anm}])
    anim, joints = scene.animations[0], scene.skins[0].joints
    parents = np.asarray(skel.control.hier_parents)
    for lt in anim.channels[0].times.astype(float) * 1000:
        ref = _get_matrices(anm, parents, lt)
        for b, node in enumerate(joints):
            ch = {c.path: c for c in anim.channels if c.node == node}
            t = ch["translation"].sample([lt / 1000])[0]
            q = ch["rotation"].sample([lt / 1000])[0]
            rq = ref[b][1] / np.linalg.norm(ref[b][1])
            assert np.allclose(t, ref[b][0], atol=2e-4)
            assert min(np.abs(q - rq).max(), np.abs(q + rq).max()) < 2e-4
