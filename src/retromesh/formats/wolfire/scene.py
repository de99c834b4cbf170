"""Overgrowth skeleton + animations + character mesh <-> Scene.

Modules: :mod:`.bones` (bone frames, hierarchy checks), :mod:`.playback` (the engine's key
blending), :mod:`.scene_read` (files -> Scene), :mod:`.scene_write` (Scene -> files); this
module gathers their entry points (the package's ``__init__`` registers the ``.phxbn``/``.anm``
formats with them; the native modules :mod:`.anm` and :mod:`.phxbn` know nothing of scenes) and
keeps the older names.

Engine facts used (Overgrowth ``bulletworld.cpp``,
``skeletonasset.cpp``, ``animation.cpp``, ``models.cpp``):

* Axes: Overgrowth is OpenGL right-handed +Y up, the same as glTF: no axis change.
* Bind frame of bone i (``GetBoneMat``): ``dir = normalize(end - start)``, ``up = +Z`` (``+X``
  when ``|up . dir| > 0.95``), ``right = normalize(up x dir)``, ``up = normalize(dir x right)``;
  columns ``[right, up, dir, (start + end) / 2]``. A zero-length bone gets ``dir = +Y`` (the
  engine would produce NaNs).
* Hierarchy: ``hier_parents`` of the control-joint section when present, else
  ``bone_parents`` (v8+), else every bone is a root. Joint node local = ``inverse(B_parent) B_i``.
  Every bone hangs below one root node (named after the file) that carries the root motion.
* ``.anm`` key matrices are model-space frames (16 floats, column-major). Per key
  ``local_i = inverse(A_parent) A_i``. Playback as the engine's ``GetMatrices``: 4 keys (wrapped
  when looping, clamped otherwise), ``interp`` between the current and next key, Catmull-Rom
  weights ``w0..w3``, blended as ``BlendFourBones`` does: successive mixes with the running
  ratios ``w1/(w0+w1)``, ``w2/(w0+w1+w2)``, ``w3/1`` (lerp for origins, which equals the
  weighted sum; slerp for rotations, shortest path). glTF has no Catmull-Rom:
  the curve is resampled at ``fps`` (default 30 Hz), always including the key times themselves
  so that the keys are reproduced exactly, and written as LINEAR. At most ``LIMITS["samples"]``
  (200,000) samples and ``LIMITS["sample_bones"]`` (500,000) samples x bones per animation: a
  damaged or hostile length is refused with a LimitError before anything is allocated (a 3 KB
  file could otherwise ask for seconds of sampling); raise the caps for longer animations.
* Root motion (centered files): per key ``rotation`` (radians about +Y) and ``center_offset``;
  linear between the current and next key as in the engine; put on the root node as
  ``T(center_offset) RotY(rotation)`` (``root_motion=False`` leaves it out). Files that are not
  centered are shown as stored (the engine centres them at load time with
  ``Animation::Center``; we do not re-run that, and the exact inverse of it is unknown).
* Weapon matrices become animated nodes ``weapon<n>`` below the root node, sampled as the
  bones are, and are written back from them (:mod:`.weapons`); IK bone paths, mobility matrices
  and shape/status keys are listed in the animation's extras.
* Events, physics weights, shape and status keys go to the animation's ``extras``.
* Mesh (``mesh=`` an OBJ): one vertex per triangle corner in OBJ order (quads split
  ``(a,b,c)``, ``(d,a,c)``), which is the order of the ``.phxbn`` per-corner weights/ids; the
  corner count must equal the ``.phxbn`` vertex count. The OBJ is centred by the centre of the
  bounding box of its used vertices, as ``Model::calcBoundingBox``/``CenterModel`` do for
  ``_MDL_CENTER`` (``center=`` overrides). 4 influences; where a corner's weights
  sum below 0.99 slot 0 becomes (closest bone by distance to its segment, 1.0) as in the engine;
  then weights are renormalised and duplicate joint ids merged. Identical corners are merged.
  OBJ texture ``v`` has its origin at the bottom: glTF ``v = 1 - vt``.

``from_scene`` of a scene made by ``to_scene`` gives back every native field: the files' own
versions, points, masses, ragdoll joints, simple IK bones, key times, events, IK bones, weapon
and mobility matrices... kept on the root node (:mod:`.scene_extras`; ``native=False``
ignores them). Otherwise (glTF -> ``.phxbn`` v11 + ``.anm`` v11): joints of the first skin; bind frames
from the inverse bind matrices; bone ends from the node extras written by ``to_scene``
(``phxbn_bone``: start/end point ids and length) or, for foreign skeletons, from the joint's
origin to the mean origin of its children (a leaf continues its parent's line by half; a lone
joint points along its +Y), never of zero length (``GetBoneMat`` would make NaNs of it). Key
matrices are re-expressed in the engine's frames of those bones (``correction``), so skinning
is unchanged whatever the bone geometry; rest transforms of nodes above or between joints (a
glTF armature node) are part of the key matrices as they are of the inverse binds. The skeleton,
keys and OBJ live in the space the engine centres the OBJ into (also for ``.anm`` alone and with
``write_mesh=False``). Animations are sampled at the key times recorded in
their extras (else at 30 Hz), turned back into model-space matrices, root motion from the root
node's channels.
"""
from __future__ import annotations

from .bones import (
                    bone_frames,
                    catmull_rom_weights,
                    skeleton_bind,
)
from .obj import parse_obj
from .playback import sample_animation
from .scene_read import (
    DEFAULT_FPS,
    LIMITS,
    MAX_SAMPLE_BONES,
    add_animation,
    anm_to_scene,
    obj_to_scene,
    phxbn_to_scene,
)
from .scene_write import scene_to_anm, scene_to_obj, scene_to_phxbn

__all__ = ["bone_frames", "phxbn_to_scene", "anm_to_scene", "scene_to_phxbn", "scene_to_anm",
           "obj_to_scene", "scene_to_obj",
           "catmull_rom_weights", "sample_animation", "skeleton_bind", "add_animation",
           "DEFAULT_FPS", "LIMITS", "MAX_SAMPLE_BONES", "parse_obj"]

