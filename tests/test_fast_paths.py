"""The fast paths give what the plain ones give: B3D weight gathering, the GLB
written in parts, the atomic write of parts."""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import retromesh
from helpers.b3dbuild import keys
from helpers.gltfcheck import assert_valid
from retromesh.fileio import Parts, atomic_write
from retromesh.formats.b3d import skinning
from retromesh.formats.b3d.chunks import BONE_DTYPE
from retromesh.gltf.writer import glb_bytes, glb_parts, scene_to_gltf
from retromesh.scene import Mesh, Node, Primitive, Scene


@st.composite
def bone_lists(draw):
    n = draw(st.integers(1, 30))
    weight = st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]) | st.floats(0, 2, width=32)
    bones = []
    for b in range(draw(st.integers(0, 9))):
        unique = draw(st.booleans()) or draw(st.booleans())
        vs = draw(st.lists(st.integers(-2, n + 1), max_size=n + 3, unique=unique))
        rec = np.zeros(len(vs), BONE_DTYPE)
        rec["vertex"] = vs
        rec["weight"] = draw(st.lists(weight, min_size=len(vs), max_size=len(vs)))
        bones.append((draw(st.integers(0, 12)) if draw(st.booleans()) else b + 1, rec))
    return bones, n


def _both_entries(bones, n):
    """:func:`skinning.entries` per BONE and joined into one part (many small BONEs)."""
    out = []
    for join in (0, 1 << 30):
        with mock.patch.object(skinning, "_JOIN_BELOW", join):   # hypothesis: no monkeypatch
            out.append(skinning.entries(bones, n))
    return out


def _top4_reference(v, j, w, n):
    """The plain reading: sort every entry by vertex, heaviest first (stable), keep 4."""
    joints, weights = np.zeros((n, 4), np.uint16), np.zeros((n, 4), np.float32)
    order = np.lexsort((-w, v))
    v, j, w = v[order], j[order], w[order]
    rank = np.arange(len(v)) - np.searchsorted(v, v, side="left")
    keep = rank < 4
    joints[v[keep], rank[keep]], weights[v[keep], rank[keep]] = j[keep], w[keep]
    return joints, weights


@settings(max_examples=300, deadline=None)
@given(bone_lists())
def test_top4_gathering_is_the_sorting_path(case):
    """Counting-sort gathering == lexsort of every entry (heaviest first, ties in file order),
    whatever the BONEs, repeats and vertex counts."""
    bones, n = case
    for ent in _both_entries(bones, n):
        positive = [(j if np.ndim(j) == 0 else j[w > 0], v[w > 0], w[w > 0])
                    for j, v, w in ent.parts]
        got = skinning.top4(positive, n)
        v, j, w = ent
        pos = w > 0
        want = _top4_reference(v[pos], j[pos], w[pos], n)
        assert np.array_equal(got[0], want[0])
        assert np.array_equal(got[1].view(np.uint32), want[1].view(np.uint32))
        # the same from joined arrays (cut where the joint changes)
        again = skinning.skin_weights((v, j, w), n)
        assert all(np.array_equal(a, b) for a, b in zip(again, skinning.skin_weights(ent, n)))


@settings(max_examples=200, deadline=None)
@given(bone_lists(), st.data())
def test_skin_weights_per_primitive_rows(case, data):
    """``rows``: the primitives' rows one after another == the per-vertex table picked."""
    bones, n = case
    rows = [np.unique(np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=n)), np.int64))
            for _ in range(data.draw(st.integers(0, 4)))]
    for mode, ent in ((m, e) for m in skinning.WEIGHT_MODES for e in _both_entries(bones, n)):
        joints, weights = skinning.skin_weights(ent, n, mode)
        pick = np.concatenate(rows).astype(np.intp) if rows else np.zeros(0, np.intp)
        rj, rw = skinning.skin_weights(ent, n, mode, rows)
        assert np.array_equal(rj, joints[pick])
        assert np.array_equal(rw.view(np.uint32), weights[pick].view(np.uint32))


@settings(max_examples=200, deadline=None)
@given(bone_lists())
def test_odd_vertices_and_record_entries(case):
    """odd_vertices == its plain bincount formula; record_entries keeps what weight_record
    reads, so its records are the same."""
    bones, n = case
    per_bone, joined = _both_entries(bones, n)
    assert [a.tolist() for a in per_bone] == [a.tolist() for a in joined]
    ent = per_bone if len(bones) % 2 else joined
    v, _, w = ent
    pos = w > 0
    count = np.bincount(v[pos], minlength=n)
    total = np.bincount(v[pos], weights=w[pos], minlength=n)
    named = np.bincount(v, minlength=n) > 0
    odd = skinning.odd_vertices(ent, n)
    assert np.array_equal(odd, named & ((count == 0) | (count > 4) | (np.abs(total - 1.0) > 1e-5)))
    kept = skinning.record_entries(ent, odd)
    used = np.arange(n)[: n // 2 + 1]
    t1, t2 = np.zeros(n, bool), np.zeros(n, bool)
    assert skinning.weight_record(ent, odd, used, t1) == skinning.weight_record(kept, odd, used, t2)
    assert np.array_equal(t1, t2)


def test_entries_in_file_order_out_of_range_dropped():
    rec = np.zeros(4, BONE_DTYPE)
    rec["vertex"], rec["weight"] = [0, 5, -1, 2], [0.5, 1, 1, 0.25]
    v, j, w = skinning.entries([(3, rec), (1, rec[:1])], 4)
    assert v.tolist() == [0, 2, 0] and j.tolist() == [3, 3, 1] and w.tolist() == [0.5, 0.25, 0.5]
    assert (v.dtype, j.dtype, w.dtype) == (np.int32, np.uint16, np.float32)


def _scene() -> Scene:
    s = Scene(name="t")
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    prim = Primitive(positions=pos, indices=np.array([0, 1, 2], np.uint32),
                     uvs=[pos[:, :2].copy()])
    s.nodes[s.add_node(Node(name="n"))].mesh = s.add_mesh(Mesh(name="m", primitives=[prim]))
    return s


def test_glb_parts_equal_glb_bytes_and_blob_on_demand(tmp_path):
    doc = scene_to_gltf(_scene())
    parts = glb_parts(doc)
    assert isinstance(parts, Parts) and len(parts.buffers) > 4
    data = glb_bytes(doc)
    assert bytes(parts) == data and parts == data and len(parts) == len(data)
    assert int.from_bytes(data[8:12], "little") == len(data)
    assert data.endswith(doc.blob)            # the buffer, joined only when asked for
    retromesh.save(_scene(), tmp_path / "x.glb")
    assert (tmp_path / "x.glb").read_bytes() == data
    assert_valid(tmp_path / "x.glb")
    back = retromesh.load(tmp_path / "x.glb")
    assert np.array_equal(back.meshes[0].primitives[0].positions, _scene().meshes[0].primitives[0].positions)


def test_atomic_write_of_parts(tmp_path):
    arr = np.arange(6, dtype=np.uint16).reshape(3, 2)
    out = atomic_write(tmp_path / "p.bin", Parts([b"ab", arr, bytearray(b"c"), memoryview(b"")]))
    assert out.read_bytes() == b"ab" + arr.tobytes() + b"c"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_atomic_write_makes_missing_folders_and_names_the_file_on_errors(tmp_path):
    """The folder is made only when the temporary file cannot be (no look first); bytes,
    bytearray and memoryview data are written as they are; an error names the file asked for."""
    out = atomic_write(tmp_path / "a" / "b" / "x.bin", b"xy")
    assert out.read_bytes() == b"xy"
    assert atomic_write(out, bytearray(b"abc")).read_bytes() == b"abc"
    assert atomic_write(out, memoryview(np.arange(3, dtype=np.uint16))).read_bytes() == \
        np.arange(3, dtype=np.uint16).tobytes()
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(OSError) as err:
        atomic_write(tmp_path / "file" / "x.bin", b"x")
    assert str(tmp_path / "file" / "x.bin") in str(err.value)
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["x.bin"]


def test_skin_weights_rows_in_any_order():
    """Rows not in increasing order (not what np.unique gives) take the picking path."""
    rec = np.zeros(4, BONE_DTYPE)
    rec["vertex"], rec["weight"] = [0, 1, 2, 3], [0.5, 1, 0.25, 0]
    rec2 = np.zeros(2, BONE_DTYPE)
    rec2["vertex"], rec2["weight"] = [0, 2], [0.5, 0.75]
    ent = skinning.entries([(1, rec), (2, rec2)], 5)
    joints, weights = skinning.skin_weights(ent, 5)
    assert joints[:, :2].tolist() == [[1, 2], [1, 0], [2, 1], [1, 0], [0, 0]]
    rows = [np.array([3, 1, 0]), np.array([0, 4])]
    rj, rw = skinning.skin_weights(ent, 5, "blitz3d", rows)
    pick = np.concatenate(rows)
    assert np.array_equal(rj, joints[pick]) and np.array_equal(rw, weights[pick])


# -- B3D keys: all tracks of an animation at once == track by track -------------------------

def _tracks_reference(node_keys, fps):
    """The per-track reading: KEYS chunks of a node merged by a stable sort of frames, times
    (frame - first) / fps with keys of one frame a jump step apart, rotations converted and
    made continuous track by track."""
    from retromesh.formats.b3d.axes import Z, rot_to_gltf
    from retromesh.formats.b3d.keys import jump_step
    from retromesh.transforms import quat_continuous
    tracks = []
    for n, chunks in node_keys:
        for path, fld, bit in (("translation", "position", 1), ("rotation", "rotation", 4),
                               ("scale", "scale", 2)):
            got = [(c.keys["frame"].astype(np.int64), c.keys[fld].astype(np.float64))
                   for c in chunks if c.flags & bit and len(c.keys)]
            if got:
                f = np.concatenate([a for a, _ in got])
                v = np.concatenate([b for _, b in got])
                order = np.argsort(f, kind="stable")
                tracks.append((n, path, f[order], v[order]))
    if not tracks:
        return []
    first = min(int(f[0]) for *_, f, _ in tracks)
    out = []
    for n, path, f, v in tracks:
        rank = np.arange(len(f)) - np.searchsorted(f, f, side="left")
        t = (f - first) / fps
        if rank.any():
            t = t + rank * max(jump_step(fps),
                               4 * float(np.spacing(np.float32(max(abs(t[-1]), 1.0)))))
        if path == "translation":
            v = v * Z
        elif path == "rotation":
            v = quat_continuous(rot_to_gltf(v))
        out.append((n, path, t.astype(np.float32), v.astype(np.float32)))
    return out


@st.composite
def keyed_nodes(draw):
    frame = draw(st.sampled_from([st.integers(-3, 12), st.integers(0, 3000),
                                  st.integers(0, 3) | st.integers(10**6, 10**6 + 3)]))
    # (the last: late keys whose float32 times are coarser than a jump step)
    nodes = []
    for _n in range(draw(st.integers(1, 5))):
        chunks = []
        for _ in range(draw(st.integers(0, 3))):
            flags = draw(st.integers(0, 7))
            frames = draw(st.lists(frame, max_size=6))
            if draw(st.booleans()):
                frames.sort()
            rot = draw(st.lists(st.tuples(*[st.floats(-1, 1, width=32)] * 4),
                                min_size=len(frames), max_size=len(frames)))
            k = keys(flags, frames)
            if flags & 1:
                k.keys["position"] = np.arange(len(frames) * 3).reshape(-1, 3) * 0.5
            if flags & 2:
                k.keys["scale"] = 1.0 + np.arange(len(frames) * 3).reshape(-1, 3)
            if flags & 4 and frames:
                k.keys["rotation"] = np.array(rot, np.float32) + [1, 0, 0, 0]
            chunks.append(k)
        nodes.append(chunks)
    return nodes, draw(st.sampled_from([25.0, 30.0, 60.0, 7.5]))


@settings(max_examples=200, deadline=None)
@given(keyed_nodes())
def test_b3d_keys_read_at_once_are_the_per_track_reading(case):
    from retromesh.formats.b3d import B3dFile, NodeChunk
    from retromesh.formats.b3d.chunks import AnimChunk
    from retromesh.formats.b3d.scene import to_scene
    chunks_of, fps = case
    root = NodeChunk(b"root", children=[AnimChunk(0, 100, fps)])
    for i, chunks in enumerate(chunks_of):
        root.children.append(NodeChunk(f"n{i}".encode(), children=list(chunks)))
    want = _tracks_reference([(i + 1, c) for i, c in enumerate(chunks_of)], fps)
    if any((t[1:] <= t[:-1]).any() for _, _, t, _ in want):
        # many keys on late frames, whose float32 times run together: a clear error
        with pytest.raises(retromesh.RetromeshError, match="increase strictly"):
            to_scene(B3dFile(children=[root]))
        return
    scene = to_scene(B3dFile(children=[root]))
    got = [(c.node, c.path, c.times, c.values) for a in scene.animations for c in a.channels]
    assert [(n, p) for n, p, *_ in got] == [(n, p) for n, p, *_ in want]
    for (_, _, t1, v1), (_, _, t2, v2) in zip(got, want):
        assert np.array_equal(t1.view(np.uint32), t2.view(np.uint32))
        assert np.array_equal(v1.view(np.uint32), v2.view(np.uint32))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 3), max_size=40), st.booleans())
def test_twins_are_the_later_triangles_of_a_vertex_set(tris, big):
    from retromesh.formats.b3d.regroup import twins
    tri = np.array(tris, np.int64).reshape(-1, 3) + (1 << 22 if big else 0)  # the 2-D unique
    seen, want = set(), []
    for i, t in enumerate(tri.tolist()):
        if tuple(sorted(t)) in seen:
            want.append([i, *t])
        seen.add(tuple(sorted(t)))
    assert twins(tri) == want


def merged_pair_by_pair(j: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference for merge_duplicate_joints, on copies: each pair of slots in turn, the
    later slot's weight added to the earlier one's when both name the same joint."""
    rj, rw = j.copy(), w.copy()
    for a in range(4):
        for b in range(a + 1, 4):
            dup = (rj[:, a] == rj[:, b]) & (rw[:, b] > 0) & (rw[:, a] > 0)
            rw[dup, a] += rw[dup, b]
            rw[dup, b] = 0
            rj[dup, b] = 0
    return rj, rw


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.tuples(*[st.integers(0, 3)] * 4),
                          st.tuples(*[st.sampled_from([0.0, 0.25, 0.5, 1.0])] * 4)), max_size=12))
def test_duplicate_joints_merged_as_pair_by_pair(rows):
    from retromesh.gltf.writer import merge_duplicate_joints
    j = np.array([r[0] for r in rows], np.uint16).reshape(-1, 4)
    w = np.array([r[1] for r in rows], np.float32).reshape(-1, 4)
    rj, rw = merged_pair_by_pair(j, w)
    gj, gw = merge_duplicate_joints(j.copy(), w.copy())
    assert np.array_equal(gj, rj) and np.array_equal(gw, rw)


def test_texture_folder_scans_are_kept_only_while_the_folder_is_unchanged(tmp_path):
    """The process-wide folder listing sees a texture added after a first lookup."""
    import os
    import time

    from retromesh.textures import TextureFinder
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    old = time.time() - 60
    os.utime(tmp_path, (old, old))          # an old folder: its listing is kept
    assert TextureFinder(tmp_path).find("a.png") is not None
    assert TextureFinder(tmp_path).find("b.png") is None
    (tmp_path / "B.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    os.utime(tmp_path, (old + 1, old + 1))  # changed (even to a time in the past)
    assert TextureFinder(tmp_path).find("b.png") is not None
    (tmp_path / "c.png").write_bytes(b"\x89PNG\r\n\x1a\n")   # changed just now
    assert TextureFinder(tmp_path).find("c.png") is not None


def test_a_folder_changed_within_its_clock_tick_is_read_again(tmp_path):
    """A folder modified just before its scan is not kept: a change in the same clock tick
    (the same modification time) is still seen."""
    import os

    from retromesh.textures import TextureFinder
    stamp = os.stat(tmp_path).st_mtime_ns            # the folder was made just now
    assert TextureFinder(tmp_path).find("d.png") is None
    (tmp_path / "d.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    os.utime(tmp_path, ns=(stamp, stamp))             # as if in the same tick
    assert TextureFinder(tmp_path).find("d.png") is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, float("nan")]),
                                   st.sampled_from([0.0, 1.0, -3.5, float("inf")])),
                         min_size=1, max_size=4), max_size=5),
       st.sampled_from(["translation", "rotation", "scale", "weights"]))
def test_channel_tracks_checked_together_as_one_by_one(tracks, path):
    from retromesh.errors import DocumentError
    from retromesh.scene import Channel
    width = {"rotation": 4, "weights": 2}.get(path, 3)
    times = np.array([t for tr in tracks for t, _ in tr], np.float64)
    values = np.array([[v] * width for tr in tracks for _, v in tr], np.float64).reshape(-1, width)
    starts = np.zeros(len(times), bool)
    starts[np.cumsum([0] + [len(tr) for tr in tracks[:-1]]).astype(int)[:len(tracks)]] = True
    nodes = list(range(len(tracks)))
    try:
        want = [Channel(n, path, times[starts.nonzero()[0][k]:][:len(tr)],
                        values[starts.nonzero()[0][k]:][:len(tr)])
                for k, (n, tr) in enumerate(zip(nodes, tracks))]
    except DocumentError as e:
        with pytest.raises(DocumentError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
            Channel.tracks(nodes, path, times, values, starts)
        return
    got = Channel.tracks(nodes, path, times, values, starts)
    assert [(c.node, c.path, c.interpolation) for c in got] == \
        [(c.node, c.path, c.interpolation) for c in want]
    for a, b in zip(got, want):
        assert a.times.dtype == b.times.dtype == np.float32 and a.values.dtype == np.float32
        assert np.array_equal(a.times, b.times) and np.array_equal(a.values, b.values)
        assert a.values.shape == b.values.shape


def test_a_nan_between_key_times_is_refused():
    """NaN compares false both ways: the order test itself must refuse it (it once passed
    when both end times were finite)."""
    from retromesh.errors import DocumentError
    from retromesh.scene import Channel
    with pytest.raises(DocumentError, match="increase strictly"):
        Channel(0, "translation", [0.0, float("nan"), 1.0], np.zeros((3, 3)))


_ODD = [0.0, 1.0, np.nan, np.inf, -np.inf, 3.5e38, -3.5e38, 1e-40]


@st.composite
def number_arrays(draw):
    n = draw(st.sampled_from([0, 1, 3, 4095, 4096, 5000]))
    a = np.full(n, 0.5)
    if n and draw(st.booleans()):
        a[draw(st.integers(0, n - 1))] = draw(st.sampled_from(_ODD))
    kind = draw(st.sampled_from(["<f4", ">f4", "<f8", "<i4", "list"]))
    if kind == "list":
        return a.tolist()
    with np.errstate(all="ignore"):
        return a.astype(kind)


@settings(max_examples=300, deadline=None)
@given(st.lists(number_arrays(), max_size=6))
def test_first_not_finite32_is_the_first_bad_array(arrays):
    """Small arrays (< 4096 values) are looked at first, then big ones, each in order."""
    from retromesh.scene import finite32, first_not_finite32
    small = [i for i, a in enumerate(arrays) if np.size(a) < 4096]
    big = [i for i, a in enumerate(arrays) if np.size(a) >= 4096]
    want = next((i for i in small + big if not finite32(arrays[i])), None)
    assert first_not_finite32(arrays) == want


def test_atomic_write_of_parts_in_short_writes_and_many_buffers(tmp_path, monkeypatch):
    """``writev`` may write fewer bytes than asked, and takes at most IOV_MAX buffers a call:
    every byte still lands once, in order."""
    import os

    from retromesh import fileio
    if not hasattr(os, "writev"):
        pytest.skip("no os.writev here")
    monkeypatch.setattr(fileio, "_WRITEV", lambda fd, bufs: os.writev(fd, [b"".join(bufs)[:7]]))
    monkeypatch.setattr(fileio, "_IOV_MAX", 5)
    bufs = [bytes([k]) * (k % 7) for k in range(40)] + [np.arange(1000, dtype=np.float32)]
    out = atomic_write(tmp_path / "q.bin", Parts(bufs))
    assert out.read_bytes() == b"".join(bytes(memoryview(b).cast("B")) for b in bufs)


def test_b3d_key_records_float_order_is_restore_ordered():
    """The key records' int32 float order (rows that differ, distances) is restore.ordered."""
    from retromesh.formats.b3d.exact import order32
    from retromesh.restore import ordered
    b = np.random.default_rng(0).integers(-2**31, 2**31, size=(5000, 4), dtype=np.int64)
    b[:8, 0] = [0, -1, -2**31, 2**31 - 1, 1, -2, 0x7F800000, -0x00800000]
    a = b.astype(np.int32).view(np.float32)
    assert np.array_equal(order32(a).astype(np.int64), ordered(a))


_values = st.sampled_from([0.0, -0.0, 1.5, 2.0, -3.0, float("nan"), float("inf")]) | \
    st.integers(-4, 4).map(float)


@given(st.lists(_values, max_size=12), st.lists(_values, max_size=6))
@settings(max_examples=200, deadline=None)
def test_distinct_and_isin_are_numpys(a, b):
    """arrays.distinct / arrays.isin (np.unique / np.isin without importing numpy.ma) give
    numpy's answers: the same values and dtype (NaN included; of 0.0 and -0.0 the first)."""
    from retromesh.arrays import distinct, isin
    x, y = np.asarray(a), np.asarray(b)
    got = distinct(x)
    assert got.dtype == np.unique(x).dtype
    assert np.array_equal(got, np.unique(x), equal_nan=True)
    for z in got[got == 0]:             # of 0.0 and -0.0, the one a has first
        assert np.signbit(z) == np.signbit(x[x == 0][0])
    assert np.array_equal(isin(x, y), np.isin(x, y))
    ints = np.asarray([int(v) for v in a if v == v and abs(v) != float("inf")], np.int64)
    assert np.array_equal(isin(ints.reshape(1, -1), y), np.isin(ints.reshape(1, -1), y))
