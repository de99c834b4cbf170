"""Every Lugaru and Overgrowth writer takes every valid glTF (issue 32, item 4): varied scenes,
built with retromesh's own glTF writer and read back as a GLB gives them, are saved to each
format of the two families. A writer holds what it is given or drops it with a LossWarning;
it may refuse a scene it has nothing to make a file from (no skin for a skeleton, no
animation for an ``.anm``) with a RetromeshError that says so, never with an internal
exception (the registry wraps those as "failed on this content")."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from retromesh.errors import LossWarning, RetromeshError
from retromesh.scene import (
    Animation,
    Channel,
    Mesh,
    MorphTarget,
    Node,
    Primitive,
    Scene,
    Skin,
)

#: target file name -> format
TARGETS = {"x.solid": "solid", "Skeleton/x": "lugaru-skeleton", "x.phxbn": "phxbn",
           "x.anm": "anm", "x.obj": "obj", "x.fzx": "fzx"}
def _quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _primitive(rng, skin_joints: int) -> Primitive:
    mode = int(rng.choice([4, 4, 4, 1, 0]))
    n = int(rng.integers(3, 12))
    pos = rng.normal(size=(n, 3)).astype(np.float32)
    kw: dict = {}
    if mode == 4:
        k = int(rng.integers(1, 6))
        kw["indices"] = rng.integers(0, n, size=3 * k).astype(np.uint32)
    elif rng.random() < 0.5:
        kw["indices"] = rng.integers(0, n, size=int(rng.integers(2, 8)) * 2).astype(np.uint32)
    if rng.random() < 0.6:
        kw["normals"] = rng.normal(size=(n, 3))
    kw["uvs"] = [rng.random((n, 2)) for _ in range(int(rng.integers(0, 4)))]
    if rng.random() < 0.3:
        kw["colors"] = rng.random((n, 4))
    if skin_joints and rng.random() < 0.8:
        kw["joints"] = rng.integers(0, skin_joints, size=(n, 4))
        w = rng.random((n, 4))
        kw["weights"] = w / w.sum(1, keepdims=True)
    if rng.random() < 0.4:
        kw["targets"] = [MorphTarget(positions=rng.normal(size=(n, 3)) * 0.1)
                         for _ in range(int(rng.integers(1, 3)))]
    return Primitive(positions=pos, mode=mode, **kw)


def random_scene(seed: int) -> Scene:
    rng = np.random.default_rng(seed)
    s = Scene(name=f"fuzz{seed}")
    nodes = []
    for i in range(int(rng.integers(1, 7))):
        parent = int(rng.integers(-1, len(nodes))) if nodes else -1
        node = Node(name=f"n{i}", translation=rng.normal(size=3),
                    rotation=_quats(rng, 1)[0],
                    scale=rng.uniform(0.5, 2, 3) if rng.random() < 0.3 else np.ones(3))
        nodes.append(s.add_node(node, parent=nodes[parent] if parent >= 0 else None))
    joints: list[int] = []
    if rng.random() < 0.6 and len(nodes) > 1:
        joints = sorted(rng.choice(nodes, size=int(rng.integers(1, len(nodes) + 1)),
                                   replace=False).tolist())
        worlds = s.world_matrices()
        s.add_skin(Skin(joints=joints, inverse_bind_matrices=np.linalg.inv(worlds[joints])))
    morph_nodes = []
    for _ in range(int(rng.integers(0, 3))):
        prims = [_primitive(rng, len(joints)) for _ in range(int(rng.integers(1, 3)))]
        ntargets = {len(p.targets) for p in prims}
        if len(ntargets) > 1:                       # glTF: one target count per mesh
            for p in prims:
                p.targets = []
            ntargets = {0}
        mi = s.add_mesh(Mesh(name="m", primitives=prims,
                             weights=[0.5] * ntargets.pop()))
        skinned = joints and all(p.joints is not None for p in prims)
        ni = s.add_node(Node(name="mesh", mesh=mi, skin=0 if skinned else None))
        if s.meshes[mi].weights:
            morph_nodes.append((ni, len(s.meshes[mi].weights)))
    for a in range(int(rng.integers(0, 3))):
        chans = []
        for _ in range(int(rng.integers(1, 5))):
            interp = str(rng.choice(["LINEAR", "STEP", "CUBICSPLINE"]))
            k = int(rng.integers(1, 6))
            times = np.sort(rng.random(k)) * 2
            times = np.unique(times)
            k = len(times)
            paths = ["translation", "rotation", "scale"] + (["weights"] if morph_nodes else [])
            path = str(rng.choice(paths))
            if path == "weights":
                node, width = morph_nodes[0]
            else:
                node, width = int(rng.choice(nodes)), {"translation": 3, "rotation": 4,
                                                       "scale": 3}[path]
            rows = k * (3 if interp == "CUBICSPLINE" else 1)
            vals = _quats(rng, rows) if path == "rotation" else rng.normal(size=(rows, width))
            chans.append(Channel(node, path, times, vals, interp))
        s.animations.append(Animation(name=f"a{a}", channels=chans))
    return s


@pytest.mark.parametrize("seed", range(40))
def test_every_writer_takes_every_valid_gltf(seed, tmp_path):
    scene = random_scene(seed)
    glb = tmp_path / "in.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.save(scene, glb)
        scene = retromesh.load(glb)
    for name, fmt in TARGETS.items():
        target = tmp_path / fmt / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                retromesh.save(retromesh.load(glb), target, format=fmt, force=True)
            except RetromeshError as exc:
                # a refusal that says what is missing, not a stray exception wrapped
                assert "failed on this content" not in str(exc), f"{fmt}: {exc}"
                assert exc.__cause__ is None or isinstance(exc.__cause__, RetromeshError), \
                    f"{fmt}: {exc!r} from {exc.__cause__!r}"
        strays = [f"{w.category.__name__}: {w.message}" for w in caught
                  if not issubclass(w.category, LossWarning)]
        assert not strays, f"{fmt}: {strays}"


def _family_scenes(tmp_path) -> dict[str, tuple[Scene, list[str]]]:
    """A scene of each family's own files, with the formats it goes back to."""
    from retromesh.formats.lugaru import samples as lg
    from retromesh.formats.lugaru.skeleton import write as write_skeleton
    from retromesh.formats.overgrowth import samples as og
    data = tmp_path / "Data"
    (data / "Skeleton").mkdir(parents=True)
    (data / "Animations").mkdir()
    (data / "Skeleton" / "BasicFigure").write_bytes(write_skeleton(lg.figure()))
    (data / "Animations" / "Walk").write_bytes(retromesh.to_bytes(lg.animation()))
    og_files = {p.name: p for p in og.write_example(tmp_path / "og")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "lugaru": (retromesh.load(data / "Skeleton" / "BasicFigure",
                                      animations=[data / "Animations" / "Walk"]),
                       ["lugaru-skeleton"]),
            "solid": (retromesh.load(lg.write_example(tmp_path / "lg")[0]), ["solid"]),
            "overgrowth": (retromesh.load(og_files["stick.phxbn"], mesh=og_files["stick.obj"],
                                          animations=[og_files["walk.anm"]]),
                           ["phxbn", "anm", "obj"]),
            "fzx": (retromesh.load(og_files["stick.fzx"]), ["fzx"]),
        }


def _mutate(scene: Scene, rng) -> None:
    """One thing a glTF may hold that the family's files do not (or an edit of theirs)."""
    prims = [p for m in scene.meshes for p in m.primitives]
    kind = int(rng.integers(0, 6))
    if kind == 0 and prims:                         # morph targets + their weights animated
        for m in scene.meshes:
            for p in m.primitives:
                p.targets = [MorphTarget(positions=np.full((len(p.positions), 3), 0.01))]
            m.weights = [0.0]
        node = next(i for i, n in enumerate(scene.nodes) if n.mesh is not None)
        scene.animations.append(Animation("blink", [Channel(node, "weights", [0.0, 1.0],
                                                            [[0.0], [1.0]])]))
    elif kind == 1 and prims:                       # more UV sets, colours
        for p in prims:
            p.uvs = p.uvs + [rng.random((len(p.positions), 2)) for _ in range(2)]
            p.colors = rng.random((len(p.positions), 4))
    elif kind == 2:                                  # a points primitive of its own
        mi = scene.add_mesh(Mesh(primitives=[Primitive(positions=rng.normal(size=(4, 3)),
                                                       mode=0)]))
        scene.add_node(Node(name="points", mesh=mi))
    elif kind == 3:                                  # a STEP / CUBICSPLINE / scale channel
        node = int(rng.integers(0, len(scene.nodes)))
        scene.animations.append(Animation("extra", [
            Channel(node, "scale", [0.0, 0.5], [[1, 1, 1], [1.2, 1, 1]], "STEP"),
            Channel(node, "translation", [0.0, 1.0], rng.normal(size=(6, 3)), "CUBICSPLINE")]))
    elif kind == 4:                                  # no skins
        for n in scene.nodes:
            n.skin = None
        for p in prims:
            p.joints = p.weights = None
        scene.skins = []
    else:                                            # a vertex moved, one added
        for p in prims[:1]:
            p.positions = p.positions.copy()
            p.positions[0] += 0.05


@pytest.mark.parametrize("seed", range(24))
def test_family_scenes_with_what_glTF_adds(seed, tmp_path):
    rng = np.random.default_rng(1000 + seed)
    for family, (scene, formats) in _family_scenes(tmp_path / "src").items():
        _mutate(scene, rng)
        glb = tmp_path / f"{family}.glb"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            retromesh.save(scene, glb)
        for fmt in formats:
            name = {"lugaru-skeleton": "Skeleton/BasicFigure", "solid": "x.solid"}.get(
                fmt, f"x.{fmt}")
            target = tmp_path / family / fmt / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    retromesh.save(retromesh.load(glb), target, format=fmt, force=True)
                except RetromeshError as exc:
                    assert "failed on this content" not in str(exc), f"{fmt}: {exc}"
                    assert exc.__cause__ is None or isinstance(exc.__cause__, RetromeshError), \
                        f"{family} -> {fmt}: {exc!r} from {exc.__cause__!r}"
            strays = [f"{w.category.__name__}: {w.message}" for w in caught
                      if not issubclass(w.category, LossWarning)]
            assert not strays, f"{family} -> {fmt}: {strays}"
