"""The Kaitai Struct descriptions read every example and corpus file to its last byte and see
what retromesh's native readers see (counts, names, versions, first and last records)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS, ROOT
from helpers.ksycheck import compile_all, top_class
from retromesh import ksy

#: every extension retromesh reads natively, each with a description
SEED_EXTENSIONS = ("b3d", "solid", "anm", "phxbn", "fzx", "sav", "abc", "skl", "ani", "msh", "cms",
                   "vxl", "hva", "dtx", "ltc")

CHECKS: dict[str, tuple[tuple[str, ...], Callable]] = {}


def agrees(ident: str, *extensions: str):
    def register(fn: Callable) -> Callable:
        CHECKS[ident] = (extensions, fn)
        return fn
    return register


#: extensionless types, found in the corpus by the folder the game keeps them in
FOLDERS = {"lugaru-skeleton": "lugaru/Data/Skeleton", "lugaru-animation": "lugaru/Data/Animations"}


def _files(extensions: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for ext in extensions:
        if ext in FOLDERS:
            out += sorted((CORPUS / FOLDERS[ext]).glob("*")) if CORPUS.is_dir() else []
            continue
        out += sorted((ROOT / "examples").rglob(f"*.{ext}"))
        if CORPUS.is_dir():
            out += sorted(CORPUS.rglob(f"*.{ext}"))
    return out


def _close(a, b) -> bool:
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       equal_nan=True, rtol=0, atol=0)


# -- per-format agreement ------------------------------------------------------------------

@agrees("lugaru_solid", "solid")
def _solid(doc, k) -> None:
    assert (k.vertex_count, k.triangle_count) == (len(doc.vertices), len(doc.triangles))
    if len(doc.vertices):
        for i in (0, -1):
            v = k.vertices[i]
            assert _close([v.x, v.y, v.z], doc.vertices[i])
    if len(doc.triangles):
        for i in (0, -1):
            t, n = k.triangles[i], doc.triangles[i]
            assert [t.i0, t.u0, t.i1, t.u1, t.i2, t.u2] == [int(n[f]) for f in
                                                            ("i0", "u0", "i1", "u1", "i2", "u2")]
            assert _close(t.gx, n["gx"]) and _close(t.gy, n["gy"])
    assert k.trailing == doc.trailing


@agrees("lugaru_skeleton", "lugaru-skeleton")
def _lugaru_skeleton(doc, k) -> None:
    assert (k.joint_count, k.muscle_count) == (len(doc.joints), len(doc.muscles))
    for i in (0, -1):
        j, n = k.joints[i], doc.joints[i]
        assert _close(j.position, n["position"]) and j.label == n["label"] and j.parent == n["parent"]
        m, nm = k.muscles[i], doc.muscles[i]
        assert (m.parent1, m.parent2, m.type) == (nm["parent1"], nm["parent2"], nm["type"])
        assert list(m.vertices) == [int(v) for v in doc.vertices[i]]
    assert (tuple(k.forward_joints), tuple(k.low_forward_joints)) == (
        tuple(doc.forward_joints), tuple(doc.low_forward_joints))
    assert k.trailing == doc.trailing


@agrees("lugaru_animation", "lugaru-animation")
def _lugaru_animation(doc, k) -> None:
    assert (k.frame_count, k.joint_count) == (doc.frame_count, doc.joint_count)
    for f in (0, -1):
        p = k.frames[f].positions[-1]
        assert _close([p.x, p.y, p.z], doc.positions[f, -1])
        assert list(k.frames[f].onground) == list(doc.onground[f])
        assert _close(k.frames[f].speed, doc.speed[f])
    assert _close(k.twist2, np.asarray(doc.twist2).reshape(-1)) and list(k.label) == list(doc.label)
    weapon = getattr(k, "weapon", None)          # absent: the generated class has no attribute
    assert (weapon is None) == (doc.weapon_targets is None)
    if weapon is not None:
        assert weapon.weapon_target_count == doc.weapon_target_count
    assert k.trailing == doc.trailing


def _b3d_children(body) -> list:
    return [c.chunk for c in body.children.items if getattr(c, "chunk", None) is not None]


def _b3d_tail(body) -> bytes:
    return b"".join(getattr(c, "tail", None) or b"" for c in body.children.items)


def _b3d_compare(native, chunk) -> None:
    from retromesh.formats import b3d
    body = chunk.body
    name = type(native).__name__
    tag = {"NodeChunk": "NODE", "MeshChunk": "MESH", "Vrts": "VRTS", "Tris": "TRIS", "Bone": "BONE",
           "Keys": "KEYS", "AnimChunk": "ANIM", "Texs": "TEXS", "Brus": "BRUS"}.get(name)
    if isinstance(native, b3d.RawChunk):
        assert chunk.tag.encode() == native.tag
        return
    assert chunk.tag == tag, (chunk.tag, name)
    if tag == "NODE":
        assert body.name.encode() == native.name
        assert _close(body.position, native.position) and _close(body.rotation, native.rotation)
        kids = _b3d_children(body)
        assert len(kids) == len(native.children)
        for n, c in zip(native.children, kids):
            _b3d_compare(n, c)
        assert _b3d_tail(body) == native.tail
    elif tag == "MESH":
        assert body.brush_id == native.brush_id
        kids = _b3d_children(body)
        assert len(kids) == len(native.children)
        for n, c in zip(native.children, kids):
            _b3d_compare(n, c)
    elif tag == "VRTS":
        assert (body.flags, body.tex_coord_sets, body.tex_coord_set_size) == \
            (native.flags, native.tex_coord_sets, native.tex_coord_set_size)
        assert len(body.vertices) == len(native.vertices)
        for i in (0, -1)[:len(body.vertices)]:
            assert _close(body.vertices[i].position, native.vertices[i]["position"])
            if native.flags & 1:
                assert _close(body.vertices[i].normal, native.vertices[i]["normal"])
    elif tag == "TRIS":
        assert body.brush_id == native.brush_id
        assert len(body.triangles) == len(native.triangles)
        for i in (0, -1)[:len(body.triangles)]:
            assert list(body.triangles[i].vertex_id) == [int(x) for x in native.triangles[i]]
    elif tag == "BONE":
        assert len(body.weights) == len(native.weights)
        for i in (0, -1)[:len(body.weights)]:
            w = native.weights[i]
            assert (body.weights[i].vertex_id, body.weights[i].weight) == \
                (int(w["vertex"]), float(w["weight"]))
    elif tag == "KEYS":
        assert body.flags == native.flags and len(body.keys) == len(native.keys)
        for i in (0, -1)[:len(body.keys)]:
            assert body.keys[i].frame == int(native.keys[i]["frame"])
            if native.flags & 4:
                assert _close(body.keys[i].rotation, native.keys[i]["rotation"])
    elif tag == "ANIM":
        assert (body.flags, body.frames) == (native.flags, native.frames)
        assert _close(body.fps, native.fps)
    elif tag == "TEXS":
        assert [t.file.encode() for t in body.textures] == [t.file for t in native.textures]
        assert [(t.flags, t.blend) for t in body.textures] == \
            [(t.flags, t.blend) for t in native.textures]
    elif tag == "BRUS":
        assert body.n_texs == native.n_texs
        assert [(b.name.encode(), b.blend, b.fx, list(b.texture_id)) for b in body.brushes] == \
            [(b.name, b.blend, b.fx, list(b.texture_ids)) for b in native.brushes]


@agrees("blitz3d_b3d", "b3d")
def _b3d(doc, k) -> None:
    assert k.root.tag == "BB3D" and k.root.body.version == doc.version
    kids = _b3d_children(k.root.body)
    assert len(kids) == len(doc.children)
    for n, c in zip(doc.children, kids):
        _b3d_compare(n, c)
    assert _b3d_tail(k.root.body) == doc.tail and k.trailing == doc.trailing


@agrees("westwood_vxl", "vxl")
def _vxl(doc, k) -> None:
    assert (k.palette_count, k.limb_count, k.remap_start, k.remap_end) == \
        (doc.palette_count, len(doc.limbs), doc.remap_start, doc.remap_end)
    assert bytes(b for c in k.palette for b in (c.r, c.g, c.b)) == doc.palette.tobytes()
    for head, tail, limb in zip(k.limb_headers, k.tailers, doc.limbs):
        assert (head.name, head.index, head.unknown1, head.unknown2) == \
            (limb.name, limb.index, limb.unknown1, limb.unknown2)
        assert (tail.xsize, tail.ysize, tail.zsize, int(tail.normal_type.value
                if hasattr(tail.normal_type, "value") else tail.normal_type)) == \
            (limb.xsize, limb.ysize, limb.zsize, limb.normal_type)
        assert _close(tail.scale, limb.scale) and _close(tail.transform, limb.transform.ravel())
    for i in (0, -1)[:len(doc.limbs)]:
        body, limb = k.tailers[i].limb_body, doc.limbs[i]
        assert list(body.span_start) == limb.span_start.tolist()
        assert list(body.span_end) == limb.span_end.tolist()
        columns = [c.column for c in body.columns if c.start != -1]
        voxels = [v for c in columns for r in c.runs for v in r.voxels]
        grid = limb.voxels()
        assert len(voxels) == grid.count
        if voxels:      # first voxel of the first stored column, last of the last
            first = np.argwhere(grid.mask.transpose(1, 0, 2))[0]      # (y, x, z) order
            y, x, z = first
            assert (voxels[0].colour, voxels[0].normal) == \
                (int(grid.colour[x, y, z]), int(grid.normal[x, y, z]))


@agrees("westwood_hva", "hva")
def _hva(doc, k) -> None:
    assert (k.name, k.frames, k.sections) == (doc.name, doc.frames, len(doc.section_names))
    assert list(k.section_names) == doc.section_names
    if doc.frames and doc.section_names:
        assert _close(k.frame_list[0].matrices[0].m, doc.matrices[0, 0].ravel())
        assert _close(k.frame_list[-1].matrices[-1].m, doc.matrices[-1, -1].ravel())
    assert k.trailing == doc.trailing


def _first_last(seq_k, arr, get) -> None:
    assert len(seq_k) == len(arr)
    for i in (0, -1)[:len(arr)]:
        assert _close(get(seq_k[i]), arr[i])


@agrees("lostsaga_skl", "skl")
def _skl(doc, k) -> None:
    assert (k.version, k.bone_count) == (doc.version, len(doc.bones))
    for kb, nb, pose in zip(k.bones, doc.bones, doc.poses):
        assert (kb.name.value, kb.parent.value, [c.value for c in kb.children]) == \
            (nb.name, nb.parent, list(nb.children))
        assert _close(kb.local_rotation, pose["local_rotation"])
        assert _close(kb.object_tm, pose["object_tm"].ravel())
    linked = k.linked_skeleton.value if hasattr(k, "linked_skeleton") and \
        k.linked_skeleton is not None else None
    assert linked == doc.linked_skeleton and k.trailing == doc.trailing


@agrees("lostsaga_ani", "ani")
def _ani(doc, k) -> None:
    version = k.version.value if hasattr(k.version, "value") else k.version
    assert (version, k.total_time, k.event_count, k.track_count) == \
        (doc.version, doc.total_time, len(doc.events), len(doc.tracks))
    assert [(e.type.value, e.info.value) for e in k.events] == [(e.type, e.info) for e in doc.events]
    for kt, nt in zip(k.tracks, doc.tracks):
        assert (kt.bone.value, kt.key_count) == (nt.bone, len(nt.keys))
        _first_last(kt.keys, nt.keys["time"], lambda key: key.time)
        _first_last(kt.keys, nt.keys["translation"], lambda key: key.translation)
    assert k.trailing == doc.trailing


@agrees("lostsaga_cms", "cms")
def _cms(doc, k) -> None:
    assert (k.version, k.vertex_count, k.face_count) == \
        (doc.version, len(doc.positions), len(doc.faces))
    _first_last(k.positions, doc.positions, lambda v: [v.x, v.y, v.z])
    _first_last(k.faces, doc.faces, lambda f: f.indices)
    assert k.trailing == doc.trailing


@agrees("lostsaga_msh", "msh")
def _msh(doc, k) -> None:
    mesh_type = k.mesh_type.value if hasattr(k.mesh_type, "value") else k.mesh_type
    assert (k.version, mesh_type, k.vertex_mask, k.vertex_count, k.submesh_count, k.face_count) \
        == (doc.version, doc.mesh_type, doc.vertex_mask, doc.vertex_count, len(doc.submeshes),
            len(doc.faces))
    assert _close([*k.bbox_min, *k.bbox_max, k.radius], doc.bbox)
    for name, get in (("positions", lambda v: [v.x, v.y, v.z]), ("normals", lambda v: [v.x, v.y, v.z]),
                      ("uv0", lambda v: [v.u, v.v]), ("uv1", lambda v: [v.u, v.v])):
        native = getattr(doc, name)
        assert (getattr(k, name, None) is None) == (native is None), name
        if native is not None:
            _first_last(getattr(k, name), native, get)
    if doc.weights is not None:
        assert [n.value for n in k.bone_names] == list(doc.bone_names)
        _first_last(k.weights, doc.weights["weight"], lambda w: w.weight)
    _first_last(k.faces, doc.faces, lambda f: f.indices)
    if doc.control_points is not None:
        assert [(c.type.value, c.bone.value) for c in k.control_points] == \
            [(c.type, c.bone) for c in doc.control_points]
    assert k.trailing == doc.trailing


def _opt(k, name):
    return getattr(k, name, None)


@agrees("overgrowth_anm", "anm")
def _anm(doc, k) -> None:
    assert (k.version, _opt(k, "centered"), _opt(k, "looping"), _opt(k, "start"), k.length,
            k.keyframe_count) == (doc.version, doc.centered, doc.looping, doc.start, doc.length,
                                  len(doc.keyframes))
    for i in (0, -1):
        kk, nk = k.keyframes[i], doc.keyframes[i]
        assert kk.time == nk.time and kk.num_bone_mats == len(nk.bone_mats)
        _first_last(kk.bone_mats, nk.bone_mats, lambda m: m.m)
        if nk.events is not None:
            assert [(e.which_bone, e.name.value) for e in kk.events] == \
                [(e.bone, e.name) for e in nk.events]
        if nk.ik_bones is not None:
            assert [list(b.path) for b in kk.ik_bones] == [list(b.path) for b in nk.ik_bones]
        if nk.weapon_mats is not None:
            assert kk.num_weapon_mats == len(nk.weapon_mats)
        if nk.center_offset is not None:
            assert _close(kk.center_offset, nk.center_offset)
    assert k.trailing == doc.trailing


@agrees("overgrowth_phxbn", "phxbn")
def _phxbn(doc, k) -> None:
    assert (k.version, k.rigging_stage, k.point_count, k.bone_count) == \
        (doc.version, doc.rigging_stage, len(doc.points), len(doc.bone_ends))
    _first_last(k.points, doc.points, lambda v: [v.x, v.y, v.z])
    _first_last(k.bone_ends, doc.bone_ends, lambda b: b.points)
    if doc.bone_mats is not None:
        _first_last(k.bone_mats, doc.bone_mats, lambda m: m.m)
    if doc.version >= 11:
        if doc.control is not None:
            c = k.control
            assert c.num_vertices == len(doc.control.weights)
            assert list(c.hier_parents) == doc.control.hier_parents.tolist()
            assert [(j.type.value if hasattr(j.type, "value") else j.type, list(j.bone_ids))
                    for j in c.joints] == [(j.type, list(j.bones)) for j in doc.control.joints]
            assert _close(c.weights[-4:], doc.control.weights[-1])
        assert [(b.bone_id, b.chain_length, b.name) for b in k.simple_ik_bones] == \
            [(b.bone, b.chain_length, b.name) for b in doc.simple_ik]
        assert k.trailing == doc.trailing


@agrees("overgrowth_fzx", "fzx")
def _fzx(doc, k) -> None:
    assert (k.version, k.object_count) == (doc.version, len(doc.objects))
    assert [o.label.encode() for o in k.objects] == [o.label for o in doc.objects]
    _first_last(k.objects, [o.rotation for o in doc.objects], lambda o: o.rotation)
    _first_last(k.objects, [o.scale for o in doc.objects], lambda o: o.scale)


@agrees("overgrowth_sav", "sav")
def _sav(doc, k) -> None:
    assert (k.version, k.level_count) == (doc.version, len(doc.levels))
    for kl, nl in zip(k.levels, doc.levels):
        assert [(p.key.value, p.value.value) for p in kl.pairs] == \
            [(p.key, p.value) for p in nl.values]
        if doc.version == 3:
            assert (kl.campaign_id.value, kl.save_category.value, kl.save_name.value, kl.md5) == \
                (nl.campaign_id, nl.save_category, nl.save_name, nl.md5)
            assert [(a.key.value, [v.value for v in a.values]) for a in kl.arrays] == \
                [(a.key, a.values) for a in nl.arrays]
            assert [(i.key.value, i.value) for i in kl.ints] == [(i.key, i.value) for i in nl.ints]
    assert k.trailing == doc.trailing


def _abc_section(n, k) -> None:
    kind = type(n).__name__
    if kind == "RawSection":
        assert bytes(k.body) == n.data
        return
    b = k.body
    if hasattr(n, "gap"):
        assert b.gap == n.gap, kind
    if kind == "HeaderSection":
        assert (b.version, b.node_count, b.lod_count, b.piece_count, b.animation_count,
                b.command_string.value, list(b.lod_distances)) == \
            (n.version, n.node_count, n.lod_count, n.piece_count, n.animation_count,
             n.command_string, [float(x) for x in n.lod_distances])
    elif kind == "PiecesSection":
        assert [p.name.value for p in b.pieces] == [p.name for p in n.pieces]
        for kp, np_ in zip(b.pieces, n.pieces):
            for kl, nl in zip(kp.lods, np_.lods):
                assert (kl.face_count, kl.vertex_count) == (len(nl.faces), len(nl.vertices))
                _first_last(kl.vertices, nl.vertices["location"],
                            lambda v: [v.location.x, v.location.y, v.location.z])
                assert sum(v.weight_count for v in kl.vertices) == len(nl.weights)
    elif kind == "NodesSection":
        assert [(x.name.value, x.index, x.flags, x.child_count) for x in b.nodes] == \
            [(x.name, x.index, x.flags, x.child_count) for x in n.nodes]
        if n.weight_sets is not None:
            assert [(w.name.value, w.count) for w in b.weight_sets] == \
                [(w.name, len(w.weights)) for w in n.weight_sets]
    elif kind == "ChildModelsSection":
        models = b.child_models if b.h.version < 13 else \
            (b.layout_extra if n.extra else b.layout_plain)
        assert [(c.name.value, c.build_number) for c in models] == \
            [(c.name, c.build_number) for c in n.child_models]
    elif kind == "AnimationSection":
        assert [(a.name.value, a.key_count) for a in b.animations] == \
            [(a.name, len(a.key_times)) for a in n.animations]
        for ka, na in zip(b.animations, n.animations):
            _first_last(ka.keys, na.key_times, lambda key: key.time_ms)
    elif kind == "SocketsSection":
        assert [(x.node, x.name.value) for x in b.sockets] == [(x.node, x.name) for x in n.sockets]
    elif kind == "AnimBindingsSection":
        assert [x.name.value for x in b.bindings] == [x.name for x in n.bindings]
    elif kind == "HeaderV6":
        assert (b.token.value, b.command_string.value) == (n.token, n.command_string)
    elif kind == "GeometryV6":
        assert (b.triangle_count, b.vertex_count, b.normal_vertex_count, list(b.vertex_start)) == \
            (len(n.faces), len(n.vertices), n.normal_vertex_count, n.vertex_start.tolist())
        _first_last(b.vertices, n.vertices["location"],
                    lambda v: [v.location.x, v.location.y, v.location.z])
    elif kind == "NodesV6":
        assert [(x.name.value, x.flags, x.md_vert_count, x.child_count) for x in b.nodes] == \
            [(x.name, x.flags, len(x.md_verts), x.child_count) for x in n.nodes]
    elif kind == "AnimationsV6":
        assert [(a.name.value, a.length, a.key_count) for a in b.animations] == \
            [(a.name, a.length, len(a.keys)) for a in n.animations]
        for ka, na in zip(b.animations, n.animations):
            assert len(ka.tracks) == len(na.tracks)
            for kt, nt in zip(ka.tracks, na.tracks):
                assert len(kt.deform) == (0 if nt.deform is None else nt.deform.size)
    elif kind == "AnimDimsV6":
        _first_last(b.dims, n.dims, lambda v: [v.x, v.y, v.z])
    elif kind == "TransformInfoV6":
        assert (b.flip_mat, b.fix_anim_keyframes) == (n.flip_mat, n.fix_anim_keyframes)


@agrees("lithtech_abc", "abc")
def _abc(doc, k) -> None:
    assert len(k.sections) == len(doc.sections)
    for n, ks in zip(doc.sections, k.sections):
        _abc_section(n, ks)
    assert k.trailing == getattr(doc, "trailing", b"")


@agrees("lithtech_dtx", "dtx")
def _dtx(doc, k) -> None:
    h = doc.header
    assert (k.version, k.width, k.height, k.mip_count) == (h.version, h.width, h.height,
                                                           h.mip_count)
    assert list(k.levels) == doc.levels
    masks = getattr(k, "alpha_masks", None)     # a field left out by its `if` is not set
    assert (list(masks) if masks is not None else None) == doc.alpha_masks
    if doc.sections is not None:
        got = [(s.type, s.data) for s in getattr(k, "sections", None) or []]
        assert got == [(s.type, s.data) for s in doc.sections]
    assert k.trailing == doc.trailing


@agrees("lithtech_ltc", "ltc")
def _ltc(doc, k) -> None:
    from retromesh.formats.lithtech import lta
    text = lta.write(doc.lta)
    lits = [t for t in k.tokens if t.is_literal and not t.is_end]
    spans = [t for t in k.tokens if not t.is_literal and not t.is_end]
    assert len(lits) + sum(t.length for t in spans) == len(text)   # every byte of the text
    assert lits[0].literal == text[0] and k.tokens[-1].is_end
    assert all(1 <= t.position < 4096 for t in spans)


# -- fixtures made by our own writers: every version branch the real files do not cover ------

def _fixtures() -> dict[str, Callable[[], bytes]]:
    from retromesh.formats.lostsaga import samples as ls
    from retromesh.formats.overgrowth import samples as wf
    from retromesh.formats.westwood import samples as ww

    def doc(make):
        return lambda: retromesh.to_bytes(make())

    out: dict[str, Callable[[], bytes]] = {}
    for v in range(0, 12):
        out[f"anm_v{v}.anm"] = doc(lambda v=v: wf.anm_fixture(v))
    out["anm_v11_plain.anm"] = doc(lambda: wf.anm_fixture(11, centered=False, mobility=False))
    for v in (5, 6, 7, 8, 9, 10, 11):
        for stage in (-1, 1, 3):
            out[f"phxbn_v{v}_stage{stage}.phxbn"] = doc(lambda v=v, s=stage: wf.phxbn_fixture(v, s))
    for v in (1, 2, 3):
        out[f"sav_v{v}.sav"] = doc(lambda v=v: wf.sav_sample(v))
    out["sample.fzx"] = doc(wf.fzx_sample)
    for v in (4000, 4001, 4002):
        out[f"ani_{v}.ani"] = doc(lambda v=v: ls.wave_animation(ls.skinned_column()[1], v))
    for v in (2000, 2001, 2002):
        for t in (0, 2):
            out[f"msh_{v}_type{t}.msh"] = doc(lambda v=v, t=t: ls.full_mesh(v, t))
    out["column.skl"] = doc(lambda: ls.skinned_column()[1])
    out["sphere_ts.vxl"] = doc(lambda: ww.sphere(12, normal_type=2))
    out["tank.hva"] = doc(lambda: ww.tank()[1])
    from retromesh.formats.lithtech import samples as lt
    for v in (6, 9, 10, 11, 12, 13):
        out[f"abc_v{v}.abc"] = lambda v=v: lt.sample_bytes(v)
    out["abc_v13_heavy.abc"] = lambda: lt.sample_bytes(13, heavy=True)
    out["abc_v6_tristrips.abc"] = lambda: lt.sample_bytes(6, transform_info=False)
    from retromesh.formats.lithtech import dtx_samples
    for key, made in dtx_samples.documents().items():
        if key.startswith("dtx"):
            out[f"{key.replace(':', '_')}.dtx"] = lambda made=made: retromesh.to_bytes(made)
    from retromesh.formats.lithtech import lta, ltc
    for n in range(1, 9):      # the end marker cut short after each of its 8 bit offsets
        word = bytes(range(97, 97 + n))
        text = lta.write(lta.modeledit_text([[b"hierarchy", word, [b"children", 1.5]]]))
        out[f"ltc_cut{n}.ltc"] = lambda text=text: ltc.compress(text)
    from retromesh.formats.lugaru import samples as lg
    out["figure.lugaru-skeleton"] = doc(lg.figure)
    out["walk.lugaru-animation"] = doc(lg.animation)
    out["walk_no_targets.lugaru-animation"] = doc(lambda: _no_targets(lg.animation(3)))
    return out


def _no_targets(doc):
    doc.weapon_target_count = doc.weapon_targets = None
    return doc


FIXTURES = _fixtures()


# -- the tests -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compile_all(tmp_path_factory.mktemp("ksy"))


def _cases():
    cases = []
    for ident, (exts, _) in sorted(CHECKS.items()):
        files = _files(exts)
        if not files:
            cases.append(pytest.param(ident, None, id=f"{ident}-none",
                                      marks=pytest.mark.skip(reason=f"no .{exts[0]} files")))
        cases += [pytest.param(ident, f, id=f"{ident}-{f.name}") for f in files]
        cases += [pytest.param(ident, name, id=f"{ident}-fixture-{name}") for name in FIXTURES
                  if name.rsplit(".", 1)[1] in exts]
    return cases


@pytest.mark.parametrize("ident,path", _cases())
def test_description_reads_file_and_agrees(compiled, ident, path):
    data = FIXTURES[path]() if isinstance(path, str) else path.read_bytes()
    obj = top_class(compiled[ident]).from_bytes(data)
    assert obj._io.pos() == len(data), f"{len(data) - obj._io.pos()} bytes left unparsed"
    if isinstance(path, str):
        fmt = path.rsplit(".", 1)[1]
    else:
        fmt = next((k for k, v in FOLDERS.items() if path.parent.match(v)), path.suffix[1:])
    CHECKS[ident][1](retromesh.read(data, format=fmt), obj)


@pytest.mark.parametrize("ext", SEED_EXTENSIONS)
def test_every_extension_has_a_description(ext):
    name = ksy.find(ext)
    assert name[:-4] in CHECKS, f"{name} has no agreement check in this file"


def test_descriptions_declare_their_extension():
    for ident, fname in ksy.descriptions().items():
        text = ksy.text(fname)
        assert f"id: {ident}" in text and "file-extension:" in text and "doc:" in text


def test_corrupt_files_stop_at_the_field(compiled):
    from kaitaistruct import KaitaiStructError
    vxl = bytearray((ROOT / "examples" / "westwood" / "tank.vxl").read_bytes())
    vxl[0:5] = b"Voxol"
    with pytest.raises(KaitaiStructError) as err:
        top_class(compiled["westwood_vxl"]).from_bytes(bytes(vxl))
    assert "/seq/0" in str(err.value) and "Voxel Animation" in str(err.value)   # the magic
    anm = bytearray((ROOT / "examples" / "overgrowth" / "walk.anm").read_bytes())
    anm[0:4] = (12).to_bytes(4, "little")
    with pytest.raises(KaitaiStructError) as err:
        top_class(compiled["overgrowth_anm"]).from_bytes(bytes(anm))
    assert "/seq/0" in str(err.value) and "max 11" in str(err.value)    # the version


def test_cli_prints_and_writes_descriptions(tmp_path):
    from typer.testing import CliRunner

    from retromesh.cli import app
    res = CliRunner().invoke(app, ["ksy", "vxl"])
    assert res.exit_code == 0 and "id: westwood_vxl" in res.output
    res = CliRunner().invoke(app, ["ksy", "-o", str(tmp_path)])
    assert res.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(ksy.descriptions().values())
    assert CliRunner().invoke(app, ["ksy", "nosuch"]).exit_code == 2
