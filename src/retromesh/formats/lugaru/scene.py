"""Lugaru files -> Scene: ``.solid`` models (:func:`solid_to_scene`) and the character as the
game builds it: skeleton + body models + skin + animations (:func:`skeleton_to_scene`,
:func:`animation_to_scene`).

``.solid`` models -> glTF (the file layout: :mod:`.solid`):

* Vertices are split per distinct (position, UV) pair so that per-corner UVs survive.
* Normals: area-weighted sums of un-normalised face normals, normalised, as
  ``Model::CalculateNormals`` does; Lugaru negates them because characters are drawn with
  front-face culling; we compute them on the corrected (outward CCW) winding instead, so they
  point outwards in glTF.
* Winding: the signed volume ``sum(v0 . (v1 x v2)) / 6`` decides. Objects (Box, Rock, Wall...)
  are stored CCW-outward; characters (Body*, Wolf*, Rabbit) and weapons (Sword, Staff,
  ThrowingKnife) CW-outward: for those the corner order is reversed (UVs with it).
* UVs: textures are uploaded bottom-up (OpenGL), so for objects ``v = 1 - gy``. Character
  bodies (and Belt, their clothes) are drawn after ``FlipTexCoords`` (``gy = -gy``,
  GL_REPEAT), so ``v = gy`` for them.
* Orientation: most models are stored lying down or upside down and the game turns them when
  it loads them. The mesh node gets exactly that turn, by model kind (table and sources in
  :mod:`.solid_kinds`): characters ``Rotate(180, 0, 0)``; objects (TreeTrunk, Leaves, Bush,
  Wall, Chimney, Box, Rock, ... and the Hawk) ``Rotate(90, 1, 1)``; Platform one more
  ``Rotate(90, 0, 0)`` first; weapons their ``Weapon::Load`` turns; Eye/Cornea/Iris none.
  So after conversion +Y is up as in the game (a tree grows up from y = 0), and the mesh
  data stays as stored. The kind comes from the option ``kind``, else the file name, else
  ``character`` for a CW-outward model tallest along Y (which picks exactly Body*, BodyLow,
  Rabbit, Wolf*, WolfLow of the shipped models), else ``plain``; ``character=True/False`` is
  the older spelling.
* Units are the file's (Lugaru scales characters by 0.04 and objects by 0.3 x their level scale);
  no scale is applied (the generic ``scale=`` load option does that).


The character.

What the game loads (``PersonType::Load``, ``Person::skeletonLoad``, ``Skeleton::Load``):

=======  ======================  ===================  ========================  ============
type     figure / low / clothes  models (Models/)     low model / clothes       skins
=======  ======================  ===================  ========================  ============
rabbit   BasicFigure,            Body.solid ...       BodyLow.solid,            FurBrown.jpg
         BasicFigureLow,         Body7.solid          Belt.solid (clothes on)   (+9 more)
         RabbitBelt
wolf     BasicFigureWolf,        Wolf.solid ...       WolfLow.solid,            FurWolfGrey.jpg
         BasicFigureWolfLow,     Wolf7.solid          Belt.solid (clothes off)  (+2 more)
         RabbitBelt
=======  ======================  ===================  ========================  ============

``skeleton_to_scene`` of a skeleton file finds the type from the file's name (a name the table does
not know is taken as a rabbit figure), then its models in ``../Models`` and skin in
``../Textures`` (names matched case-insensitively); ``mesh=`` names another ``.solid`` and
``skin=`` another skin (a number in the type's list or a file name). The GLB holds:

* one bone per muscle that owns vertices, under a root node named after the skeleton; its
  rest transform is the muscle's ``T(mid) R`` (:mod:`.pose`) scaled by the type's
  proportions (rabbit: head 1.2, body 1.05, legs 1.1/1.05/1.1; wolf 1.1), as ``DrawSkeleton``
  draws it (``proportions=False``: no scale);
* an empty per joint (named after its body part: ``head``, ``leftknee``...) holding the
  joint position: the animation data themselves;
* the body model skinned to those bones, each vertex wholly to the muscle owning it (the last
  muscle listing it; an unlisted vertex belongs to muscle 0, as in the engine), in the game's
  space (the model turned ``Rx(180)`` and scaled 0.04 as ``Skeleton::Load`` does), UVs as
  ``FlipTexCoords`` leaves them, the skin texture embedded; the six other body models (closed
  hands, blinks...) as morph targets ``Body2`` ... ``Body7`` (the engine morphs the head,
  hands, chest and tail between them);
* the clothes model (``Belt.solid`` on ``RabbitBelt``, ``Textures/Belt.png`` blended) when
  the type wears clothes; the low-detail model (``BodyLow.solid`` on ``BasicFigureLow``) in
  a second glTF scene ``low_detail`` (``low=False``/``clothes=False`` leave them out);
* each animation (``animations=``) as a glTF animation: per frame the joints' positions and
  every bone's ``T(mid) R`` from ``FindRotationMuscle`` at those positions (angles rounded as
  ``DoAnimations`` rounds them). Frame k lasts ``1 / (2 max(speed_k, speed_k+1))`` seconds
  (``DoAnimations`` at the default speed 1); in between, the joints move linearly and the
  muscles' angles are interpolated linearly as ``DoAnimations`` does (the short way round for
  ``rotate3``; ``rotate1`` can sweep the long way round, as in the game), sampled at ``fps``
  (30). ``between="keys"``: keys at the frames only, glTF's interpolation in between
  (smoother than the game in flips).
  Not reproduced: the head turning towards a target (``DoHead``), the morphs' timing, the
  character's own motion through the level and the ragdoll.

Units are the skeleton's (a rabbit is about 9 units tall); the game draws a rabbit at 0.2
and a wolf at 0.23 of that (``defaultScale``), about metres: ``--scale 0.2``. +Y is up.

Every native field rides in the root node's extras (:mod:`.scene_extras`: the skeleton file
and ``{name: animation file}``) so that :mod:`.scene_write` gives the same files back;
:mod:`.character` is what it gives back.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ... import registry
from ...arrays import distinct
from ...errors import DocumentError, LossWarning, MissingCompanionError, RetromeshError
from ...extras import compact_json
from ...scene import (
    Animation,
    Channel,
    Material,
    Mesh,
    MorphTarget,
    Node,
    Primitive,
    Scene,
    Skin,
    Texture,
    TextureRef,
)
from . import animation as la, skeleton as ls, solid
from .pose import (
    between_frames,
    muscle_angles,
    muscle_proportions,
    muscle_rotations,
    rotations_as_quats,
)
from .scene_extras import ANIMATIONS_KEY, SKELETON_KEY, UPRIGHT_KEY, animations_text
from .solid_kinds import ROTATIONS, kind_of_name, rotation_quat

__all__ = ["PERSON_TYPES", "character_parts", "skeleton_to_scene", "solid_to_scene",
           "model_kind", "mesh_arrays", "animation_to_scene", "frame_times", "paired_skeleton"]

#: ``PersonType::Load``: file names by creature
PERSON_TYPES: dict[str, dict[str, Any]] = {
    "rabbit": {"figure": "BasicFigure", "low": "BasicFigureLow", "clothes": "RabbitBelt",
               "models": ["Body"] + [f"Body{k}" for k in range(2, 8)], "low_model": "BodyLow",
               "clothes_model": "Belt", "wears_clothes": True,
               "skins": ["FurBrown", "FurWhite", "FurBlack", "FurLynx", "FurOtter", "FurOpal",
                         "FurSable", "FurChocolate", "FurBlackWhite", "FurBrownWhite"]},
    "wolf": {"figure": "BasicFigureWolf", "low": "BasicFigureWolfLow", "clothes": "RabbitBelt",
             "models": ["Wolf"] + [f"Wolf{k}" for k in range(2, 8)], "low_model": "WolfLow",
             "clothes_model": "Belt", "wears_clothes": False,
             "skins": ["FurWolfGrey", "FurWolfDark", "FurWolfSnow"]},
}
_SKIN_EXT = {"rabbit": ".jpg", "wolf": ".jpg"}
#: ``Model::Scale`` of the drawn models (``modelclothes`` is drawn a little wider)
MODEL_SCALE = np.array([0.04, 0.04, 0.04])
CLOTHES_SCALE = np.array([0.041, 0.04, 0.041])
#: most bone samples per animation between frames (a longer one keeps its frames only)
MAX_SAMPLES = 100000


def _find(folder: Path, name: str) -> Path | None:
    """``folder/name``, the name matched case-insensitively (the game ran on Windows too)."""
    exact = folder / name
    if exact.is_file():
        return exact
    if not folder.is_dir():
        return None
    low = name.lower()
    for p in sorted(folder.iterdir()):
        if p.name.lower() == low and p.is_file():
            return p
    return None


def _role(stem: str) -> tuple[str, str]:
    """(creature, role) of a skeleton file name; a name the table does not know: a rabbit figure."""
    s = stem.lower()
    for creature, t in PERSON_TYPES.items():
        for role in ("figure", "low", "clothes"):
            if t[role].lower() == s and not (role == "clothes" and creature != "rabbit"):
                return creature, role
    return ("wolf" if "wolf" in s else "rabbit"), "figure"


def character_parts(source: Path | None) -> dict[str, Any]:
    """What the game would load with this skeleton file: creature, role, ``data`` folder."""
    stem = source.name if source is not None else "BasicFigure"
    creature, role = _role(stem)
    data = None
    if source is not None:
        parent = source.parent
        data = parent.parent if parent.name.lower() == "skeleton" else parent
    return {"creature": creature, "role": role, "data": data, "type": PERSON_TYPES[creature]}


def _read_solid(path: Path) -> solid.SolidFile:
    data = path.read_bytes()
    return registry.parse(registry.get("solid"), data, str(path))


def _read_skeleton(path: Path) -> ls.SkeletonFile:
    return registry.parse(registry.get("lugaru-skeleton"), path.read_bytes(), str(path))


def _game_positions(doc: solid.SolidFile, scale: np.ndarray = MODEL_SCALE) -> np.ndarray:
    """``Rotate(180, 0, 0)`` then ``Scale``: the model in the skeleton's space."""
    p = np.asarray(doc.vertices, np.float64).reshape(-1, 3)
    return p * np.array([1.0, -1.0, -1.0]) * scale


def _owners(skel: ls.SkeletonFile, n: int) -> np.ndarray:
    own = ls.owners(skel, n)
    own[own < 0] = 0                    # the engine's owner array starts at 0
    return own


def outward_normals(doc: solid.SolidFile, pos: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(triangles, their corners' gx and gy, a unit normal per position): the triangles wound
    outward (all reversed when the model's signed volume is negative) and area-weighted normals
    in float64, +Y where a position has none."""
    tri = doc.indices()
    gx = np.asarray(doc.triangles["gx"], np.float32)
    gy = np.asarray(doc.triangles["gy"], np.float32)
    if solid.signed_volume(pos, tri) < 0:
        tri, gx, gy = tri[:, [0, 2, 1]], gx[:, [0, 2, 1]], gy[:, [0, 2, 1]]
    acc = np.zeros_like(pos)
    if len(tri):
        fn = np.cross(pos[tri[:, 1]] - pos[tri[:, 0]], pos[tri[:, 2]] - pos[tri[:, 0]])
        for k in range(3):
            np.add.at(acc, tri[:, k], fn)
    nrm = np.linalg.norm(acc, axis=1, keepdims=True)
    ok = (nrm[:, 0] > 1e-20) & np.all(np.isfinite(acc), axis=1)
    normals = np.tile([0.0, 1.0, 0.0], (len(pos), 1))
    normals[ok] = acc[ok] / nrm[ok]
    return tri, gx, gy, normals


def _split(doc: solid.SolidFile, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vertex index per glTF vertex, normals, uvs, indices): one glTF vertex per distinct
    (vertex, u, v); triangles wound counter-clockwise outward; ``v = gy`` (FlipTexCoords)."""
    tri, gx, gy, normals = outward_normals(doc, pos)
    u, v = gx.reshape(-1), gy.reshape(-1)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v)) and np.all(np.isfinite(pos))):
        raise DocumentError("model coordinates must be finite")
    corner = np.zeros(len(u), dtype=[("i", "<i8"), ("u", "<u4"), ("v", "<u4")])
    corner["i"], corner["u"], corner["v"] = tri.reshape(-1), u.view(np.uint32), v.view(np.uint32)
    uniq, first, inverse = np.unique(corner, return_index=True, return_inverse=True)
    uvs = np.stack([u[first], v[first]], axis=1)
    return uniq["i"], normals[uniq["i"]], uvs, inverse.reshape(-1).astype(np.uint32)


def frame_times(speed: np.ndarray) -> np.ndarray:
    """Key time of each frame: frame k -> k+1 takes ``1 / (2 max(speed_k, speed_k+1))``
    (at least a millisecond; 1/30 s for a speed that is not a positive number)."""
    s = np.asarray(speed, np.float64)
    if len(s) < 2:
        return np.zeros(len(s))
    step = np.maximum(s[:-1], s[1:])
    bad = ~np.isfinite(step) | (step <= 1e-3)
    dt = np.where(bad, 1 / 30, np.maximum(1 / (2 * np.where(bad, 1, step)), 1e-3))
    return np.concatenate([[0.0], np.cumsum(dt)])


def _material(scene: Scene, name: str, image: str | None, blend: bool = False) -> int:
    tex = None
    if image is not None:
        tex = TextureRef(scene.add_texture(Texture(name=Path(image).stem, uri=image)))
    return scene.add_material(Material(name=name, base_color_texture=tex, roughness=1.0,
                                       alpha_mode="BLEND" if blend else "OPAQUE"))


def _load_animation(item: Any) -> tuple[str, la.AnimationFile]:
    if isinstance(item, la.AnimationFile):
        return "animation", item
    path = Path(item)
    return path.name, registry.parse(registry.get("lugaru-animation"), path.read_bytes(), str(path))


class _Builder:
    """Collects the bones, joint empties, meshes and animations of one character."""

    def __init__(self, doc: ls.SkeletonFile, name: str, creature: str, proportions: bool,
                 fps: float = 30.0) -> None:
        self.doc = doc
        self.fps = float(fps)
        self.scene = Scene(name=name)
        self.root = self.scene.add_node(Node(name=name, extras={}))
        with np.errstate(invalid="ignore"):         # NaN bit patterns are refused below
            self.rest_pos = np.asarray(doc.joints["position"], np.float64)[None]
        if not np.all(np.isfinite(self.rest_pos)):
            raise DocumentError("a joint position is NaN or infinite")
        self.rest_rot = muscle_rotations(muscle_angles(self.rest_pos, doc))[0]
        m = doc.muscles
        nj = len(doc.joints)
        if nj == 0 or np.any((m["parent1"] < 0) | (m["parent1"] >= nj) | (m["parent2"] < 0)
                             | (m["parent2"] >= nj)):
            raise DocumentError("a muscle joins joints that do not exist (see `retromesh check`)")
        self.i1, self.i2 = np.asarray(m["parent1"], np.int64), np.asarray(m["parent2"], np.int64)
        self.rest_mid = (self.rest_pos[0, self.i1] + self.rest_pos[0, self.i2]) / 2
        self.scale = muscle_proportions(doc, creature if proportions else "none")
        self.used: set[int] = set()
        self.meshes: list[tuple[int, np.ndarray]] = []     # (mesh node, muscle per glTF vertex)
        self.creature = creature

    def add_model(self, name: str, model: solid.SolidFile, skel: ls.SkeletonFile, material: int,
                  morphs: list[tuple[str, solid.SolidFile]], scale: np.ndarray = MODEL_SCALE,
                  scene_roots: list[int] | None = None) -> None:
        pos = _game_positions(model, scale)
        vi, normals, uvs, idx = _split(model, pos)
        owner = _owners(skel, len(pos))[vi]
        targets = []
        for tname, other in morphs:
            if len(other.vertices) != len(model.vertices):
                warnings.warn(f"{tname} has {len(other.vertices)} vertices, {name} "
                              f"{len(model.vertices)}: not a morph target", LossWarning, stacklevel=4)
                continue
            delta = (_game_positions(other, scale) - pos)[vi]
            targets.append(MorphTarget(positions=delta, name=tname))
        prim = Primitive(positions=pos[vi], normals=normals, uvs=[uvs], indices=idx,
                         material=material, targets=targets)
        mesh = self.scene.add_mesh(Mesh(name=name, primitives=[prim],
                                        weights=[0.0] * len(targets),
                                        extras={"targetNames": [t.name for t in targets]}
                                        if targets else {}))
        node = self.scene.add_node(Node(name=name, mesh=mesh))
        if scene_roots is not None:                 # in another glTF scene only
            self.scene.roots.remove(node)
            scene_roots.append(node)
        self.used.update(int(o) for o in distinct(owner))
        self.meshes.append((node, owner))

    def finish_skin(self) -> list[int]:
        """Bone nodes for the muscles the meshes use, the joint empties, the skin."""
        labels = np.asarray(self.doc.joints["label"], np.int64)
        names = [ls.BODYPARTS[k] if 0 <= k < len(ls.BODYPARTS) else f"joint{i}"
                 for i, k in enumerate(labels)]
        bones = sorted(self.used)
        quats = rotations_as_quats(self.rest_rot[bones]) if bones else np.zeros((0, 4))
        self.bone_nodes: list[int] = []
        for b, q in zip(bones, quats, strict=True):
            n = self.scene.add_node(Node(
                name=f"muscle{b}_{names[self.i1[b]]}_{names[self.i2[b]]}",
                translation=self.rest_mid[b], rotation=q, scale=self.scale[b],
                extras={"lugaru_muscle": b}), parent=self.root)
            self.bone_nodes.append(n)
        self.joint_nodes = [self.scene.add_node(Node(name=names[i], translation=self.rest_pos[0, i],
                                                     extras={"lugaru_joint": i}), parent=self.root)
                            for i in range(len(labels))]
        self.bones = bones
        if bones and self.meshes:
            ibm = np.zeros((len(bones), 4, 4))
            ibm[:, :3, :3] = self.rest_rot[bones].transpose(0, 2, 1)
            ibm[:, :3, 3] = -np.einsum("bij,bj->bi", ibm[:, :3, :3], self.rest_mid[bones])
            ibm[:, 3, 3] = 1
            skin = self.scene.add_skin(Skin(joints=list(self.bone_nodes), inverse_bind_matrices=ibm,
                                            skeleton=self.root, name=self.scene.name))
            slot = np.zeros(len(self.doc.muscles), np.uint16)
            slot[bones] = np.arange(len(bones))
            for node, owner in self.meshes:
                self.scene.nodes[node].skin = skin
                mesh_index = self.scene.nodes[node].mesh
                assert mesh_index is not None           # a body node holds its mesh
                prim = self.scene.meshes[mesh_index].primitives[0]
                j = np.zeros((len(owner), 4), np.uint16)
                j[:, 0] = slot[owner]
                w = np.zeros((len(owner), 4), np.float32)
                w[:, 0] = 1
                prim.joints, prim.weights = j, w
        return bones

    def add_animation(self, name: str, anim: la.AnimationFile) -> bool:
        nj = len(self.doc.joints)
        if anim.joint_count != nj or anim.frame_count == 0:
            warnings.warn(f"animation {name}: {anim.joint_count} joints and {anim.frame_count} "
                          f"frames for a skeleton of {nj} joints: left out", LossWarning, stacklevel=3)
            return False
        pos = np.asarray(anim.positions, np.float64)
        if not np.all(np.isfinite(pos)):
            warnings.warn(f"animation {name}: a joint position is NaN or infinite: left out",
                          LossWarning, stacklevel=3)
            return False
        times = frame_times(anim.speed)
        channels = [Channel(node=n, path="translation", times=times, values=pos[:, i])
                    for i, n in enumerate(self.joint_nodes)]
        if self.bones:
            b = np.asarray(self.bones)
            angles = muscle_angles(pos, self.doc, hang=name.lower() == "hangon", rounded=True)[:, b]
            fps = self.fps if times[-1] * self.fps <= MAX_SAMPLES else 0.0
            st, sp, sa = between_frames(times, pos, angles, fps)
            quats = rotations_as_quats(muscle_rotations(sa))
            mid = (sp[:, self.i1[b]] + sp[:, self.i2[b]]) / 2
            for k, n in enumerate(self.bone_nodes):
                channels.append(Channel(node=n, path="translation", times=st, values=mid[:, k]))
                channels.append(Channel(node=n, path="rotation", times=st, values=quats[:, k]))
        self.scene.animations.append(Animation(name=name, channels=channels,
                                               extras={"lugaru_animation": name}))
        return True


def _models(parts: dict[str, Any], mesh: Any) -> tuple[list[Path | None], str]:
    t = parts["type"]
    data = parts["data"]
    folder = data / "Models" if data is not None else None
    names = {"figure": t["models"], "low": [t["low_model"]], "clothes": [t["clothes_model"]]}[parts["role"]]
    if mesh is not None:
        return [Path(mesh)], Path(mesh).stem
    found = [_find(folder, f"{n}.solid") if folder is not None else None for n in names]
    return found, names[0]


def skeleton_to_scene(doc: ls.SkeletonFile, *, source: Path | None = None,
                      animations: list[Any] | None = None, mesh: Any = None, skin: Any = None,
                      low: bool = True, clothes: bool = True, proportions: bool = True,
                      fps: float = 30.0, between: str = "engine") -> Scene:
    parts = character_parts(Path(source) if source is not None else None)
    t, data, role = parts["type"], parts["data"], parts["role"]
    name = Path(source).name if source is not None else "skeleton"
    if not (fps > 0 and np.isfinite(fps)):
        raise DocumentError(f"fps must be positive, got {fps}")
    if between not in ("engine", "keys"):
        raise DocumentError(f"between must be 'engine' or 'keys', got {between!r}")
    b = _Builder(doc, name, parts["creature"], proportions, fps if between == "engine" else 0.0)
    sc = b.scene
    if data is not None:
        sc.extras["source_dir"] = str(data / "Textures") if (data / "Textures").is_dir() else str(data)
    skins = t["skins"]
    if isinstance(skin, str) and not skin.isdigit():
        skin_file = skin
    else:
        k = int(skin or 0)
        skin_file = skins[k % len(skins)] + _SKIN_EXT[parts["creature"]]
    models, main_name = _models(parts, mesh)
    if models and models[0] is not None:
        blend = role == "clothes"
        mat = _material(sc, "clothes" if blend else "skin", "Belt.png" if blend else skin_file, blend)
        morphs = [(p.stem, _read_solid(p)) for p in models[1:] if p is not None]
        b.add_model(main_name, _read_solid(models[0]), doc, mat, morphs,
                    CLOTHES_SCALE if blend else MODEL_SCALE)
    elif source is not None:
        warnings.warn(f"no body model found for {name} (looked in {data}/Models); the skeleton "
                      "alone is converted (--mesh names a .solid)", LossWarning, stacklevel=2)
    extra: list[int] = []
    if role == "figure" and mesh is None and data is not None and source is not None:
        sk_dir = Path(source).parent
        if clothes and t["wears_clothes"]:
            cs, cm = _find(sk_dir, t["clothes"]), _find(data / "Models", t["clothes_model"] + ".solid")
            if cs is not None and cm is not None:
                mat = _material(sc, "clothes", "Belt.png", blend=True)
                b.add_model(cm.stem, _read_solid(cm), _read_skeleton(cs), mat, [], CLOTHES_SCALE)
        if low:
            lsk, lm = _find(sk_dir, t["low"]), _find(data / "Models", t["low_model"] + ".solid")
            if lsk is not None and lm is not None:
                mat = sc.materials.index(next(m for m in sc.materials if m.name == "skin")) \
                    if any(m.name == "skin" for m in sc.materials) else _material(sc, "skin", skin_file)
                b.add_model(lm.stem, _read_solid(lm), _read_skeleton(lsk), mat, [], scene_roots=extra)
    b.finish_skin()
    if extra:
        sc.extra_scenes.append(("low_detail", [b.root, *extra]))
    kept: dict[str, str] = {}
    for item in animations or []:
        aname, anim = _load_animation(item)
        base, k = aname, 2
        while aname in kept:
            aname, k = f"{base}#{k}", k + 1
        if b.add_animation(aname, anim):
            kept[aname] = compact_json(anim)
    sc.nodes[b.root].extras.update({SKELETON_KEY: compact_json(doc), "lugaru_creature": parts["creature"],
                                    "lugaru_role": role})
    if kept:
        sc.nodes[b.root].extras[ANIMATIONS_KEY] = animations_text(kept)
    return sc


def _skeleton_candidates(folder: Path, animation: str) -> list[Path]:
    """The skeleton files of ``folder`` in the order the game pairs them with ``animation``:
    its creature's ``PersonType`` figure and low-detail figure (``Wolf*`` animations are the
    wolf's, the others the rabbit's), then the other creatures' ones, then any other file."""
    wolf = animation.lower().startswith("wolf")
    creatures = sorted(PERSON_TYPES, key=lambda c: (c == "wolf") != wolf)
    names = [PERSON_TYPES[c][role] for c in creatures for role in ("figure", "low")]
    out = [p for p in (_find(folder, n) for n in names) if p is not None]
    if folder.is_dir():
        out += sorted(p for p in folder.iterdir() if p.is_file() and not p.suffix and p not in out
                      and p.name.lower() != PERSON_TYPES["rabbit"]["clothes"].lower())
    return out


def paired_skeleton(source: Path, joints: int) -> Path | None:
    """The skeleton the game would play the animation at ``source`` on, from its
    ``Data/Skeleton`` folder: the first of :func:`_skeleton_candidates` with the animation's
    joint count (the engine indexes frames by the skeleton's joints), else the first there
    (whose joint count then differs: reported), else None."""
    folder = Path(source).parent
    data = folder.parent if folder.name.lower() == "animations" else folder
    found = _skeleton_candidates(data / "Skeleton", Path(source).name)
    for p in found:
        try:
            if len(_read_skeleton(p).joints) == joints:
                return p
        except (OSError, RetromeshError):            # not a skeleton: not a candidate
            continue
    return found[0] if found else None


def animation_to_scene(doc: la.AnimationFile, *, source: Path | None = None,
                       skeleton: Any = None, animations: list[Any] | None = None,
                       mesh: Any = None, skin: Any = None, low: bool = True,
                       clothes: bool = True, proportions: bool = True, fps: float = 30.0,
                       between: str = "engine") -> Scene:
    """An animation on its character: ``skeleton=`` or the one the game would pair it with
    (:func:`paired_skeleton`: ``BasicFigureWolf`` for ``Wolf*`` animations, else
    ``BasicFigure``, their low-detail figures, then any skeleton of its joint count)."""
    if skeleton is None and source is not None:
        skeleton = paired_skeleton(Path(source), doc.joint_count)
    if skeleton is None:
        raise MissingCompanionError("a Lugaru animation plays on a skeleton and there is none "
                                    "in its Data/Skeleton folder (pass skeleton=, --skeleton "
                                    "Data/Skeleton/BasicFigure)", unchecked="its joint count "
                                    "against its skeleton, and its conversion")
    skel = _read_skeleton(Path(skeleton))
    if len(skel.joints) != doc.joint_count:
        raise DocumentError(f"the animation has {doc.joint_count} joints, its skeleton "
                            f"{Path(skeleton).name} {len(skel.joints)}: the engine indexes the "
                            "frames by the skeleton's joints [lugaru-animation.joint_count]")
    anim_list: list[Any] = [source if source is not None else doc, *(animations or [])]
    if source is None:
        anim_list[0] = doc
    return skeleton_to_scene(skel, source=Path(skeleton), animations=anim_list, mesh=mesh,
                             skin=skin, low=low, clothes=clothes, proportions=proportions, fps=fps,
                             between=between)


def mesh_arrays(doc: solid.SolidFile,
                character: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(positions, normals, uvs, indices) of the glTF primitive (vertices split per UV)."""
    p = np.asarray(doc.vertices, dtype=np.float64)
    if not np.all(np.isfinite(p)):
        raise DocumentError("vertex coordinates must be finite")
    tri, gx, gy, normals = outward_normals(doc, p)
    # split per distinct (vertex, u, v)
    u = gx.reshape(-1)
    v = (gy if character else 1.0 - gy).reshape(-1).astype(np.float32)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        raise DocumentError("texture coordinates must be finite")
    corner = np.zeros(len(u), dtype=[("i", "<i8"), ("u", "<u4"), ("v", "<u4")])
    corner["i"] = tri.reshape(-1)
    corner["u"] = u.view(np.uint32)
    corner["v"] = v.view(np.uint32)
    uniq, first, inverse = np.unique(corner, return_index=True, return_inverse=True)
    vi = uniq["i"]
    positions = p[vi].astype(np.float32)
    uvs = np.stack([u[first], v[first]], axis=1).astype(np.float32)
    return positions, normals[vi].astype(np.float32), uvs, inverse.reshape(-1).astype(np.uint32)


def model_kind(doc: solid.SolidFile | None, name: Any, character: bool | None,
               kind: str | None) -> str:
    """A ``.solid`` model's kind (:mod:`.solid_kinds`): ``kind`` when given, else the one of
    ``name``, else ``character`` when the shape says so, else ``plain``; ``character=True/False``
    forces the character conventions on or off."""
    if kind is not None:
        if kind not in ROTATIONS:
            raise DocumentError(f"kind must be one of {sorted(ROTATIONS)}, got {kind!r}")
        return kind
    found = kind_of_name(name)
    if character is not None:
        if character:
            return "character"
        return "plain" if found in (None, "character") else found
    if found is None:
        found = "character" if doc is not None and solid.is_character(doc) else "plain"
    return found


def solid_to_scene(doc: solid.SolidFile, *, source: Path | None = None,
                   character: bool | None = None, kind: str | None = None) -> Scene:
    """``kind`` (see :mod:`.solid_kinds`) defaults to the one of the file name, else
    ``character`` when the shape says so, else ``plain``; ``character=True/False`` is the
    older spelling of ``kind="character"`` / not a character."""
    kind = model_kind(doc, source, character, kind)
    name = source.stem if source else "solid"
    scene = Scene(name=name)
    is_char = kind == "character"
    pos, nrm, uvs, idx = mesh_arrays(doc, is_char)
    if len(idx):
        prim = Primitive(positions=pos, normals=nrm, uvs=[uvs], indices=idx)
        m = scene.add_mesh(Mesh(name=name, primitives=[prim]))
    else:
        m = None
    extras = {"lugaru_kind": kind, "lugaru_character": is_char,
              "lugaru_clockwise": solid.signed_volume(doc.vertices, doc.indices()) < 0}
    rotation = [0.0, 0.0, 0.0, 1.0]
    if kind != "plain":
        rotation = rotation_quat(kind)      # the game's load-time Rotate(...) calls
        extras[UPRIGHT_KEY] = True
    scene.add_node(Node(name=name, mesh=m, rotation=np.asarray(rotation), extras=extras))
    return scene
