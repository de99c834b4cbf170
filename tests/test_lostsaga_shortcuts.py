"""Lost Saga: the shortcuts the conversions take (docs/lossless.md, "What the records cost") give
what the long way gives, bit for bit: the records of GLBs already written depend on these
values (issue 32)."""
from __future__ import annotations

import warnings

import numpy as np

from retromesh import LossWarning
from retromesh.formats.lostsaga import common, msh as msh_mod, samples
from retromesh.formats.lostsaga.scene import build_scene
from retromesh.formats.lostsaga.scene_write import skeleton_from_scene, skeleton_poses
from retromesh.restore import as_glb_holds
from retromesh.scene import Node

RNG = np.random.default_rng(32)
# values whose bits depend on how they are compared or cleaned
ODD = np.array([0.0, -0.0, 0.25, -0.5, 1.0, np.nan, np.inf, -np.inf, 1e-30, 3e38], np.float32)


def test_skeleton_poses_are_the_writers():
    msh, skl = samples.skinned_column(segments=5)
    skl.poses["local_rotation"] = RNG.normal(size=(len(skl.poses), 4))     # not unit
    skl.poses["inverse_rotation"] = RNG.normal(size=(len(skl.poses), 4))
    for scene in (build_scene(msh, skl, name="column"), build_scene(None, skl, name="column")):
        # the poses themselves: without the record that puts the file's back
        assert scene.extras["lostsaga_skeleton"].pop("exact")
        held = as_glb_holds(scene, meshes=False, animations=False)
        assert skeleton_poses(held).tobytes() == skeleton_from_scene(held).poses.tobytes()
        # a node between the bones (an exporter's scaled "Armature"): the bones' local matrices
        root = held.roots[0]
        held.nodes.append(Node(name="Armature", scale=(0.01, 0.01, 0.01), children=[root]))
        held.roots = [len(held.nodes) - 1 if r == root else r for r in held.roots]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LossWarning)       # the scale it drops
            back = skeleton_from_scene(held)
        assert skeleton_poses(held).tobytes() == back.poses.tobytes()


def test_vertices_of_submeshes_with_and_without_gaps():
    msh, skl = samples.skinned_column(segments=2)
    faces = np.asarray(msh.faces, np.int64).reshape(-1, 3)
    used = np.unique(faces[: len(faces) // 2])
    # the second submesh skips a vertex (np.unique's way), the first uses its whole range
    keep = faces[len(faces) // 2:]
    mid = int(np.median(keep))
    keep = keep[~(keep == mid).any(axis=1)]
    assert keep.min() < mid < keep.max() and mid not in keep           # a vertex left out
    assert np.ptp(used) + 1 == len(used)                                # all used
    msh.faces = np.concatenate([faces[: len(faces) // 2], keep]).astype(np.uint16)
    msh.submeshes = np.array([(0, int(used.max()) + 1, 0, len(faces) // 2),      # min_index,
                              (0, msh.vertex_count, 3 * (len(faces) // 2), len(keep))],
                             msh_mod.SUBMESH_DTYPE)        # vertex_count, index_start, face_count
    prims = build_scene(msh, skl, name="column").meshes[0].primitives
    for prim, tri in zip(prims, (faces[: len(faces) // 2], keep)):
        vs, local = np.unique(tri.reshape(-1), return_inverse=True)
        want = common.vec_to_gltf(msh.positions[vs]).astype(np.float32)
        assert prim.positions.tobytes() == want.tobytes()
        assert np.array_equal(prim.indices, local.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1))


def test_weight_records_sort_as_a_stable_sort():
    for n in (0, 1, 7, 300):
        w = RNG.choice(ODD, (n, 4))
        j = RNG.integers(0, 9, (n, 4)).astype(np.float32)
        with np.errstate(all="ignore"):
            got = msh_mod.weight_records(j, w, n)
            ww = np.nan_to_num(w.astype(np.float64))
            order = np.argsort(-ww, axis=1, kind="stable")
            ww, jj = np.take_along_axis(ww, order, axis=1), np.take_along_axis(j, order, axis=1)
            jj[ww <= 0] = 0
            ww[ww <= 0] = 0
            want = np.zeros(n, msh_mod.WEIGHT_DTYPE)
            want["weight"], want["bone"] = ww, jj
        assert got.tobytes() == want.tobytes()


def test_bounding_box_prescale_and_nan_to_num_as_numpy_gives_them():
    with np.errstate(all="ignore"):
        for k in range(200):
            p = RNG.choice(ODD, (int(RNG.integers(1, 30)), 3)) if k % 2 else \
                RNG.normal(size=(30, 3)).astype(np.float32)
            lo, hi = p.min(axis=0), p.max(axis=0)
            box = np.array([*lo, *hi, float(np.linalg.norm(hi - lo)) / 2.0], np.float32)
            assert msh_mod.bounding_box(p).tobytes() == box.tobytes()
            v = p.astype(np.float64)
            m = np.max(np.abs(v), axis=-1, keepdims=True)
            assert common.prescale(v).tobytes() == (v / np.where(m > 0, m, 1.0)).tobytes()
            assert common.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0).tobytes() == \
                np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0).tobytes()
            assert common.nan_to_num(p).tobytes() == np.nan_to_num(p).tobytes()
