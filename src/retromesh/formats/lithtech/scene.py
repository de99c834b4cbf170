"""LithTech ABC <-> :class:`~retromesh.scene.Scene` (glTF conventions).

Modules, by role (each role has a module per layout, ``_v6`` for v6):

* native layout: :mod:`.abc` (+ :mod:`.abc_model`, the document), :mod:`.abc_v6`, :mod:`.common`;
* scene mapping (read): :mod:`.scene_read` (v9-v13 -> Scene), :mod:`.scene_read_v6`;
* writer: :mod:`.scene_write` (Scene -> v9-v13, :func:`~.scene_write.from_scene_v9`),
  :mod:`.scene_write_v6` (:func:`~.scene_write_v6.from_scene_v6`, built on the v9-v13 writer);
* kept data in extras: :mod:`.scene_extras`, :mod:`.scene_extras_v6`;
* :mod:`.scene_common` (axes and helpers both directions share), :mod:`.samples`;
* this module chooses the version both ways (``to_scene``, ``from_scene``) and holds the
  structural checks.

Axes: LithTech is Direct3D left-handed, +Y up, +Z forward. Everything crosses into glTF here,
once, by mirroring Z (the rule for any left-handed +Y-up source): positions, normals and translations
``(x, y, -z)``, quaternions ``(x, y, z, w) -> (-x, -y, z, w)``, matrices ``S M S`` with
``S = diag(1, 1, -1, 1)``, triangle winding reversed. UVs are top-left based like glTF (no flip).

v9-v13 -> Scene
  * every node becomes a joint node (in depth-first order, parents from the child counts; when
    the counts leave several trees, an identity node ``abc_roots`` holds them); its
    rest transform is the bind pose (``inverse(parent m) @ m``), the skin's inverse bind matrices
    are ``inverse(m)`` (node ``m`` is the model-space bind matrix);
  * each piece's LOD 0 is a skinned mesh on a root node named after the piece; LOD n > 0 goes to
    a node ``<piece>_lod<n>`` in a second scene ``"lods"`` (``Scene.extra_scenes``, option
    ``lods=False`` leaves them out); face corners are split into glTF vertices per distinct
    (vertex, u, v); one material per material index (specular values in its extras);
  * weights: the 4 largest biases per vertex, renormalised (LossWarning saying how many
    vertices lost weights); a vertex without weights follows node 0. The bind pose is checked:
    ``max |sum(bias * m_node @ weight.location) - vertex.location|`` is the mesh's
    ``extras["bind_max_deviation"]``;
  * each animation becomes one glTF animation (ms -> s; ``interpolation_ms``, ``unknown``,
    extents and the keyframe strings as ``extras["markers"]``); keys are parent-relative; nodes
    with flag 0x02 (rotation only) get their bind offset instead of the key's translation;
    a node whose bind matrix carries scale gets a scale channel of 1 (engine keys have none);
  * sockets become nodes under their node (``extras["abc_socket"]``); command string, LOD
    distances, weight sets, child models (with their transforms) and anim bindings go to the
    scene's extras, with a copy of every animation's extras (Blender drops animation extras);
    :mod:`.scene_extras` lists everything that rides in extras.

v6 -> Scene
  * the bind pose is the first key of the first animation (haekb's reading; v6 stores no bind
    matrices); vertices are in their node's space and are placed with it; each vertex has one
    node (weight 1);
  * vertex animation becomes **morph targets**: one target per (animation, key) on the mesh,
    holding the displacement of the deformation-node vertices (decoded ``byte * Scale +
    Transform``, placed by the node's bind transform) and a ``weights`` channel per animation
    that switches linearly from one key's target to the next (so the glTF interpolates the
    vertices the way the engine does; the node animation moves the deformation node on top).
    ``morph=False`` leaves the targets out;
  * ``TransformInfo``: FixAnimKeyframes = 1 conjugates the key quaternions; FlipMat = 1 says
    the data are already mirrored in Z, so no axis flip is applied (both default to 1 when the
    section is absent, as the LithTech 1.5 engine does). Options ``flip_mat`` and
    ``fix_anim_keyframes`` override them (``--set flip_mat=0``). This reading of FlipMat is
    derived from the LithTech 1.5 loader's use of the flag (it mirrors Z when FlipMat is set,
    and assumes both flags are 1 when the section is absent) and is unverified;
  * only the full-detail mesh is converted (how faces map to the v6 LOD vertices is unknown);
    the LOD vertex tables, bounds, AnimDims, the byte range of the vertex animation, the
    section order and unknown sections ride in extras (:mod:`.scene_extras_v6`).

Scene -> v6 (``from_scene`` when the scene's ``abc_version`` extra is 6, or ``version=6``):
:mod:`.scene_write_v6` (the v9..v13 writer below makes the skeleton, vertices and keys; one
node per vertex; morph targets back to MD vertex animation). An unedited v6 comes back with
every count and value (face normals are recomputed from the triangles).

Scene -> v9..v13 (``from_scene``: the version of the scene's ``abc_version`` extra, else v12;
``version=6`` or ``9..13`` overrides it)
  * joints of the skins used by the default scene's meshes become the nodes (parent = nearest
    joint ancestor; a synthetic ``root`` when there is not exactly one root); bind matrices are
    ``S rigid(inverse(IBM)) S`` (rotation and translation only: ABC keys hold no scale, so a
    joint's scale, e.g. an armature object's unapplied scale, is baked into its weight
    locations instead); vertices are the glTF vertices (model space), weights the non-zero
    ones with ``location = inverse(m) @ vertex``; glTF vertices that differ only in their UVs
    are merged back into one ABC vertex (UVs are per face corner in ABC); a mesh without skin
    under an animated node becomes a node of its own (bound where it rests) so that it keeps
    its motion; other meshes without skin are frozen in place (turned over when their
    transform mirrors) and follow their nearest joint ancestor as it rests, or a static
    synthetic ``root`` when they have none;
  * every animation is sampled at the union of its key times (rounded to whole ms), or at the
    file's key times kept in the extras (``key_times_ms``) when the glTF's are among them, or
    lie on one frame grid (24/25/30/50/60 fps) within the file's time span, as an exporter that
    samples every frame and drops repeated values leaves them (Blender's defaults; warned):
    animated world matrices of the whole glTF hierarchy are evaluated and each node's key is
    ``inverse(parent world) @ world`` of the rigid parts (so armature objects and non-joint
    parents are baked in, which is what keeps Blender round trips from "exploding"); scale
    that differs from the bind pose's is dropped with a LossWarning; a scene without
    animations gets one one-key animation of the rest pose;
  * a primitive of more than 65535 vertices (ABC faces index vertices with uint16) becomes
    several pieces ``<name>_part<k>``, runs of its triangles (without LODs);
  * LOD n > 0 comes back from the nodes ``<piece>_lod<n>`` of other scenes (``extras``
    ``abc_piece``/``abc_lod``, as ``to_scene`` writes them, else the name), and from such nodes
    of the default scene when their piece is there too (Blender's importer brings the nodes of
    every scene into its one scene, so the LODs come back from Blender beside their piece,
    named ``<piece>_lod<n>``); a piece with fewer LODs than the
    others repeats its last one (every piece must have LODCount LODs);
  * node flags and indices, sockets, keyframe strings, interpolation times, animation extents,
    LOD distances, command string, weight sets, child models, anim bindings, each piece's
    material index and LOD weight come back from the extras ``to_scene`` wrote (checked against
    the scene: a weight set or child model that does not fit the nodes is left out or given
    the bind transforms, with a LossWarning);
  * the internal radius is the one read while the LOD 0 vertices reach as far from the origin
    as they did (an unedited model), else the farthest vertex (LossWarning when it differs);
    each vertex's SubLOD index comes back from its mesh's ``sublod`` extra while the LOD has
    as many vertices as it had (else 0, with a LossWarning).
"""
from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import restore, restore_editor
from ...binio import Reader
from ...errors import DocumentError, FormatError
from ...extras import integer
from ...findings import Finding, error, warning
from ...scene import Scene
from . import abc as abcmod, abc_v6, exact, exact_v6, skins as skins_mod
from .abc import AbcModel, HeaderSection, PiecesSection
from .abc_v6 import AbcV6Model
from .scene_common import bind_deviation, latin1, tree_parents
from .scene_read import to_scene_v9
from .scene_read_v6 import to_scene_v6
from .scene_write import from_scene_v9
from .scene_write_v6 import from_scene_v6

__all__ = ["to_scene", "from_scene", "structural_problems", "bind_deviation", "tree_parents"]


def to_scene(doc, *, source=None, lods: bool = True, flip_mat: int | None = None,
             fix_anim_keyframes: int | None = None, morph: bool = True,
             texture_path: Iterable[str | os.PathLike] = ()) -> Scene:
    """An ABC model as a Scene (see the module docstring for the mapping), wearing the skins
    the games would give it (:mod:`.skins`: found beside ``source`` or in ``texture_path``)."""
    with np.errstate(all="ignore"):     # nonsense values are caught by the finite checks
        if isinstance(doc, AbcV6Model):
            scene = to_scene_v6(doc, lods, flip_mat, fix_anim_keyframes, morph)
        elif isinstance(doc, AbcModel):
            kept: list = []
            scene = to_scene_v9(doc, lods, kept)
        else:
            raise DocumentError(f"{type(doc).__name__} is not an ABC model")
        # (read in the file's own terms: it can come back as it is)
        if lods and morph and flip_mat is None and fix_anim_keyframes is None:
            if isinstance(doc, AbcModel):
                rec, key = exact.keep(scene, doc, kept), exact.KEY
            else:
                rec, key = exact_v6.keep(scene, doc), exact_v6.KEY
            if rec:
                scene.extras[key] = rec
            elif rec is None and _small(doc):
                keep_whole_file(scene, doc)
    return skins_mod.dress(scene, source if isinstance(source, (str, os.PathLike)) else None,
                           [texture_path] if isinstance(texture_path, (str, os.PathLike))
                           else texture_path)


def _write(doc: AbcModel | AbcV6Model) -> bytes:
    return abc_v6.write(doc) if isinstance(doc, AbcV6Model) else abcmod.write(doc)


def _small(doc: AbcModel | AbcV6Model) -> bool:
    """Whether a model is small enough for the whole-file record (a v6 model always, when
    :func:`.exact_v6.keep` cannot predict what the writer makes of it; a v9..v13 model when
    :func:`.exact.keep` cannot predict its layout and its bulk data is within
    :data:`retromesh.restore.WHOLE_LIMIT`)."""
    if isinstance(doc, AbcV6Model):
        return True
    size = sum(np.asarray(a).nbytes for p in doc.pieces for lod in p.lods
               for a in (lod.faces, lod.vertices, lod.weights))
    size += sum(np.asarray(a.transforms).nbytes for a in doc.animations)
    return size <= restore.WHOLE_LIMIT


def keep_whole_file(scene: Scene, doc: AbcModel | AbcV6Model) -> None:
    """The whole-file record (scene extra ``abc_exact``, :func:`retromesh.restore.keep_bytes`):
    what the writer (``legacy``, as when this record was the only one) does not give back byte
    for byte from the scene as a GLB holds it, block by block; from_scene puts it back where it
    writes the same blocks again. ``to_scene`` keeps it for the models :func:`.exact.keep`
    and :func:`.exact_v6.keep` cannot predict; GLBs of earlier releases hold it for every
    ``.abc`` (a v6 model's since fedf238 hold ``abc_v6_blocks`` instead: the same encoding,
    against the writer of today)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            back = _write(_from_scene(restore.as_glb_holds(scene), None, legacy=True))
        except (DocumentError, FormatError):
            return
    rec = restore.keep_bytes(_write(doc), back)
    if rec:
        scene.extras["abc_exact"] = rec


def from_scene(scene: Scene, *, version: int | None = None, skins: str | None = None,
               **options: Any) -> AbcModel | AbcV6Model | dict[str, Any]:
    """A Scene as an ABC model: the version its extras name (``abc_version``, as ``to_scene``
    writes it), else v12, unless ``version`` says otherwise (6 or 9..13); see the module
    docstring. ``skins="dtx"`` (or a pixel format: ``dxt5``, ``32p``...) also writes the
    materials' textures as ``.dtx`` beside the model (:func:`.skins.skin_outputs`)."""
    scene = restore_editor.put_back_written(scene)
    model = _from_scene(scene, version)
    if skins is None:
        return model
    # the skins beside the model, named as skins.py finds them again ({stem}.dtx, _head.dtx)
    return {"": model, **skins_mod.skin_outputs(scene, "32" if skins == "dtx" else skins)}


def _from_scene(scene: Scene, version: int | None, legacy: bool | None = None
                ) -> AbcModel | AbcV6Model:
    ex = scene.extras or {}
    # the whole-file record's blocks are the bytes the writer wrote as it did then
    legacy = "abc_exact" in ex if legacy is None else legacy
    if version is None:
        version = 6 if integer(ex, "abc_version", 12, 6, 13) == 6 else \
            integer(ex, "abc_version", 12, min(abcmod.VERSIONS), max(abcmod.VERSIONS))
    kept = exact.read(ex.get(exact.KEY)) if version != 6 and \
        version == integer(ex, "abc_version", 12, 6, 13) else None
    if kept is not None:
        return exact.put_back(from_scene_v9(scene, version, kept_binds=kept.binds).model, kept)
    doc = from_scene_v6(scene, legacy) if version == 6 else \
        from_scene_v9(scene, version, legacy=legacy).model
    # (a v6 record of today: blocks against today's writer; abc_exact: the legacy writer's)
    rec = ex.get("abc_exact") if legacy or version != 6 else ex.get(exact_v6.KEY)
    if rec is None or (version == 6) != (integer(ex, "abc_version", 12, 6, 13) == 6):
        return doc
    data, n = restore.put_back_bytes(_write(doc), rec)
    if not n:
        return doc
    reread = abc_v6.read if version == 6 else abcmod.read
    return reread(Reader(data, file="abc"))


# -- checks --------------------------------------------------------------------------------
def structural_problems(doc: Any) -> list[Finding]:
    """What the engine refuses or misreads (``error``) and what it shows wrongly (``warning``)."""
    out: list[Finding] = []
    if isinstance(doc, AbcV6Model):
        n = len(doc.nodes)
        g = doc.geometry
        if g is not None and len(g.vertices):
            if len(g.faces) and int(np.asarray(g.faces["vertex"]).max()) >= len(g.vertices):
                out.append(error("abc.face_vertex", "a face refers to a vertex beyond the vertex list"))
            if int(np.asarray(g.vertices["node"]).max()) >= max(n, 1):
                out.append(error("abc.vertex_node", "a vertex refers to a node beyond the node list"))
        for a in doc.animations:
            t = np.asarray(a.keys["time"]).astype(np.int64)
            if len(t) > 1 and np.any(np.diff(t) <= 0):
                out.append(warning("abc.key_order", f"animation {latin1(a.name)!r} has key times that do not "
                                   "increase"))
        return out
    h = doc.header
    n = len(doc.nodes)
    tparents, missing = tree_parents([nd.child_count for nd in doc.nodes])
    if missing:
        out.append(error("abc.node_tree", f"the node tree announces {missing} children that are not "
                         "there"))
    if tparents.count(-1) > 1:
        out.append(error("abc.roots", f"the child counts leave {tparents.count(-1)} node trees; the "
                         "engine has one root"))
    ref = abcmod.recount(_shallow_copy(doc)).header
    for f in ("keyframe_count", "animation_count", "piece_count", "child_model_count",
              "face_count", "vertex_count", "weight_count", "socket_count", "weight_set_count",
              "string_count", "string_length_total"):
        if getattr(h, f) != getattr(ref, f):
            out.append(warning("abc.header_count", f"header {f} is {getattr(h, f)}, the content has "
                               f"{getattr(ref, f)}"))
    for pi, p in enumerate(doc.pieces):
        for li, lod in enumerate(p.lods):
            nv = len(lod.vertices)
            if len(lod.faces) and int(np.asarray(lod.faces["vertex"]).max()) >= nv:
                out.append(error("abc.face_vertex", f"piece {pi} LOD {li}: a face refers to a vertex "
                                 f"beyond {nv}"))
            if len(lod.weights) and int(np.asarray(lod.weights["node"]).max()) >= n:
                out.append(error("abc.weight_node", f"piece {pi} LOD {li}: a weight refers to a node "
                                 f"beyond {n}"))
    mats = np.stack([np.asarray(nd.matrix, np.float64).reshape(4, 4) for nd in doc.nodes]) \
        if n else np.zeros((0, 4, 4))
    for p in doc.pieces:
        for li, lod in enumerate(p.lods):
            dev = bind_deviation(lod, mats)
            if dev is not None and dev > 1e-3:
                out.append(warning("abc.bind", f"piece {latin1(p.name)!r} LOD {li}: the weighted bind "
                                   f"positions are up to {dev:.4g} away from the vertex locations "
                                   "(the model will not look the same in the engine)"))
    for s in doc.sockets:
        if s.node >= n:
            out.append(error("abc.socket_node", f"socket {latin1(s.name)!r} refers to node {s.node} of {n}"))
    for a in doc.animations:
        t = np.asarray(a.key_times).astype(np.int64)
        if len(t) > 1 and np.any(np.diff(t) <= 0):
            out.append(warning("abc.key_order", f"animation {latin1(a.name)!r} has key times that do not "
                                   "increase"))
    return out


def _shallow_copy(doc: AbcModel) -> AbcModel:
    return AbcModel(sections=[copy.copy(s) if isinstance(s, (HeaderSection, PiecesSection)) else s
                              for s in doc.sections])
