"""Irrlicht as a judge: builds (or finds) tools/irrlicht/irrcheck and runs it.

``irrcheck()`` returns the binary's path or skips the calling test with the reason (no
libirrlicht-dev, no compiler). ``run(files)`` loads many files in one irrcheck process with a
timeout (Irrlicht can hang on truncated files; only valid files are fed) and returns one dict
per file, in order. ``differences(a, b)`` compares two reports the way a Luanti player would see
them and returns the differences per aspect, allowing for mesh buffers merged or split.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tools" / "irrlicht" / "irrcheck.cpp"
SETUP = ROOT / "tools" / "setup" / "20-irrlicht.sh"
CACHE = Path(os.environ.get("RETROMESH_CACHE", Path.home() / ".cache" / "retromesh")) / "irrcheck"

#: the aspects ``differences`` reports on
ASPECTS = ("counts", "triangles", "surface", "joints", "weights", "frames", "speed", "materials", "textures",
           "bbox")


@functools.cache
def _find() -> tuple[str | None, str]:
    if os.environ.get("IRRCHECK"):
        return os.environ["IRRCHECK"], ""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    binary = CACHE / f"irrcheck-{digest}"
    if binary.is_file() and os.access(binary, os.X_OK):
        return str(binary), ""
    # build it (never installs packages from inside the tests: tools/setup does that)
    try:
        res = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=300, check=False,
                             env={**os.environ, "IRRCHECK_NO_INSTALL": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"Irrlicht tier: building irrcheck failed ({exc})"
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or ["unknown reason"])[-1]
        return None, f"Irrlicht tier skipped: {why}"
    return res.stdout.strip().splitlines()[-1], ""


def irrcheck() -> str:
    """Path of the irrcheck binary; skips the test when Irrlicht is not available."""
    path, why = _find()
    if path is None:
        pytest.skip(why)
    return path


def run(files: list[Path | str], *, triangles: bool = False, timeout: float = 120) -> list[dict]:
    """irrcheck's reports for ``files`` (one process; raises AssertionError naming a file that hung)."""
    cmd = [irrcheck()] + (["--triangles"] if triangles else []) + [str(f) for f in files]
    try:
        res = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        done = (exc.stdout or b"").count(b"\n")
        raise AssertionError(f"irrcheck hung on {files[min(done, len(files) - 1)]} "
                             f"(no answer within {timeout} s)") from None
    if res.returncode != 0:
        err = res.stderr.decode(errors="replace")[-2000:]
        raise AssertionError(f"irrcheck exited {res.returncode}: {err}")
    reports = [json.loads(line) for line in res.stdout.decode().splitlines() if line.startswith("{")]
    assert len(reports) == len(files), (len(reports), len(files), res.stderr[-2000:])
    return reports


# --- comparing two reports ---------------------------------------------------------------------

#: Irrlicht's skinned mesh buffers (1.8 and Luanti's fork alike) index vertices with u16: a TRIS
#: chunk that uses more distinct vertices wraps around and draws garbage
MAX_BUFFER_VERTICES = 65535


def oversized(report: dict) -> list[int]:
    """Vertex counts of the mesh buffers too big for 16-bit indices."""
    return [b["vertices"] for b in report.get("buffers", []) if b["vertices"] > MAX_BUFFER_VERTICES]


def model_size(report: dict) -> float:
    """Diagonal of the frame-0 box (at least 1e-6): the scale the tolerances are relative to."""
    box = np.asarray(report.get("bbox") or [[0] * 6], dtype=float)[0]
    return max(float(np.linalg.norm(box[3:] - box[:3])), 1e-6)


def _triangles(report: dict, frame_index: int) -> np.ndarray:
    """The posed triangles at one sampled frame, each a 9-vector of its corners."""
    return np.asarray(report["triangles"][frame_index], dtype=float).reshape(-1, 9)


def _surface(report: dict) -> np.ndarray:
    """Frame 0's triangles with what is drawn on them: per corner the position divided by the model
    size, both UV sets and the vertex colour's four channels divided by 255."""
    corners = np.asarray(report["triangles"][0], dtype=float).reshape(-1, 3) / model_size(report)
    surf = np.asarray(report["surface"], dtype=float).reshape(-1, 5)
    argb = surf[:, 4].astype(np.uint32)
    channels = np.stack([(argb >> s) & 0xFF for s in (24, 16, 8, 0)], axis=1) / 255.0
    return np.concatenate([corners, surf[:, :4], channels], axis=1).reshape(-1, 33)


def _triangle_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance from a triangle of either set to the nearest triangle of the other (rows:
    the three corners' values one after the other); a triangle matches any rotation of its corners
    (same winding), so buffer and index order and where a triangle starts do not matter."""
    from scipy.spatial import cKDTree

    if len(a) == 0 or len(b) == 0:
        return 0.0 if len(a) == len(b) else float("inf")

    width = a.shape[1]

    def rotations(t: np.ndarray) -> np.ndarray:
        corners = t.reshape(len(t), 3, width // 3)
        return np.concatenate([np.roll(corners, k, axis=1).reshape(-1, width) for k in range(3)])

    return float(max(cKDTree(rotations(b)).query(a)[0].max(), cKDTree(rotations(a)).query(b)[0].max()))


def _joint_tree(report: dict) -> list[tuple[str, str]]:
    """(joint name, parent's name) for every joint: the hierarchy independent of joint order."""
    joints = report.get("joints", [])
    return [(j["name"], joints[j["parent"]]["name"] if j["parent"] >= 0 else "") for j in joints]


def _material_key(m: dict) -> tuple:
    layers = tuple((layer["texture"], layer["wrap_u"], layer["wrap_v"]) for layer in m["layers"])
    return (m["type"], m["diffuse"], m["ambient"], m["lighting"], m["zwrite"], m["backface_culling"],
            m["gouraud"], m["color_material"], round(m["shininess"], 4), layers)


def materials(report: dict) -> dict[tuple, int]:
    """Distinct materials (with their buffers' vertex type: 1 = two UV sets, as Irrlicht makes
    lightmapped buffers) and the number of indices drawn with each: buffers merged by material."""
    out: dict[tuple, int] = {}
    for buf in report["buffers"]:
        key = _material_key(buf["material"]) + (buf["vertex_type"],)
        out[key] = out.get(key, 0) + buf["indices"]
    return out


def differences(a: dict, b: dict, *, rel_tol: float = 1e-3) -> dict[str, str]:
    """What differs between report ``a`` (the original) and ``b`` (the round trip), per aspect
    (an aspect absent from the result is equal). Buffer layout is not compared: totals, the
    posed triangles, and materials with the number of indices drawn with each are."""
    diff: dict[str, str] = {}
    if not (a.get("ok") and b.get("ok")):
        return {"counts": f"load ok: {a.get('ok')} -> {b.get('ok')}"}
    tol = rel_tol * model_size(a)

    if (a["vertices"], a["indices"]) != (b["vertices"], b["indices"]):
        diff["counts"] = (f"vertices {a['vertices']} -> {b['vertices']}, "
                          f"indices {a['indices']} -> {b['indices']}")
    elif oversized(b) and not oversized(a):
        diff["counts"] = f"mesh buffers over Irrlicht's 16-bit indices: {oversized(b)} vertices"

    if "triangles" in a and "triangles" in b and a["frames"] == b["frames"]:
        worst = []
        for i, frame in enumerate(a["frames"]):
            d = _triangle_distance(_triangles(a, i), _triangles(b, i))
            if not d <= tol:
                worst.append(f"frame {frame:g}: {d:.6g}")
        if worst:
            diff["triangles"] = f"posed triangles move (tolerance {tol:.3g}): " + ", ".join(worst)

    if "surface" in a and "surface" in b:
        d = _triangle_distance(_surface(a), _surface(b))
        if not d <= rel_tol:
            diff["surface"] = (f"frame 0's UVs or vertex colours differ: distance {d:.4g} "
                               f"(positions / model size, UVs, colours / 255; tolerance {rel_tol:g})")

    ja, jb = _joint_tree(a), _joint_tree(b)
    if sorted(ja) != sorted(jb):
        names_a, names_b = {n for n, _ in ja}, {n for n, _ in jb}
        if names_a != names_b or len(ja) != len(jb):
            diff["joints"] = (f"{len(ja)} -> {len(jb)} joints; only before: {sorted(names_a - names_b)}, "
                              f"only after: {sorted(names_b - names_a)}")
        else:
            diff["joints"] = f"parents differ: {sorted(set(ja) - set(jb))} -> {sorted(set(jb) - set(ja))}"

    wa = {j["name"]: (j["weights"], j["weight_sum"]) for j in a.get("joints", [])}
    wb = {j["name"]: (j["weights"], j["weight_sum"]) for j in b.get("joints", [])}
    bad = []
    for n, (count, total) in wa.items():
        count_b, total_b = wb.get(n, (0, 0.0))
        if count != count_b or not abs(total - total_b) <= 1e-3 * max(1.0, total):
            bad.append(f"{n}: {count} weights (sum {total:.4g}) -> {count_b} (sum {total_b:.4g})")
    bad += [f"{n}: new joint with {wb[n][0]} weights" for n in wb if n not in wa and wb[n][0]]
    if bad:
        diff["weights"] = "; ".join(bad[:6]) + (f" (+{len(bad) - 6} more)" if len(bad) > 6 else "")

    if a["frame_count"] != b["frame_count"]:
        diff["frames"] = f"frame count {a['frame_count']} -> {b['frame_count']}"
    if not abs(a["speed"] - b["speed"]) <= 1e-4 * max(1.0, abs(a["speed"])):
        diff["speed"] = f"animation speed {a['speed']:g} -> {b['speed']:g}"

    ma, mb = materials(a), materials(b)
    if ma != mb:
        only_a = [k for k in ma if k not in mb]
        only_b = [k for k in mb if k not in ma]
        if only_a or only_b:
            diff["materials"] = f"before {_describe(only_a, ma)}; after {_describe(only_b, mb)}"
        else:
            diff["materials"] = f"indices per material {list(ma.values())} -> {list(mb.values())}"

    # TEXS as Irrlicht's loader reads it: flags pick the material type (2 alpha, 4 masked, 64/128
    # sphere map), clamp (16/32), mipmaps (8: invisible to EDT_NULL) and the layer (65536 = second
    # UV set); blend 5 on a second layer makes EMT_LIGHTMAP_M2.
    ta = sorted({(t["name"], t["flags"], t["blend"]) for t in a.get("texs", [])})
    tb = sorted({(t["name"], t["flags"], t["blend"]) for t in b.get("texs", [])})
    if ta != tb:
        diff["textures"] = (f"TEXS (name, flags, blend) before {sorted(set(ta) - set(tb))}, "
                            f"after {sorted(set(tb) - set(ta))}")

    if a["frames"] == b["frames"]:
        boxes_a, boxes_b = np.asarray(a["bbox"], float), np.asarray(b["bbox"], float)
        err = np.abs(boxes_a - boxes_b).max(axis=1) if boxes_a.shape == boxes_b.shape else None
        if err is None or not (err <= tol).all():
            diff["bbox"] = (f"posed boxes differ (tolerance {tol:.3g}): " + ", ".join(
                f"frame {f:g}: {e:.6g}" for f, e in zip(a["frames"], err) if not e <= tol)
                if err is not None else f"{boxes_a.shape} -> {boxes_b.shape}")
    elif "frames" not in diff:
        diff["bbox"] = f"sampled frames {a['frames']} -> {b['frames']}"
    every_a, every_b = a.get("bbox_every_frame"), b.get("bbox_every_frame")
    if "bbox" not in diff and every_a and every_b and len(every_a) == len(every_b):
        err = np.abs(np.asarray(every_a, float) - np.asarray(every_b, float)).max(axis=1)
        bad = np.flatnonzero(~(err <= tol))
        if len(bad):
            diff["bbox"] = (f"posed boxes differ at {len(bad)} of {len(err)} whole frames "
                            f"(tolerance {tol:.3g}), first at frame {bad[0]}: {err[bad[0]]:.6g}, "
                            f"worst {np.nanmax(err):.6g}")
    return diff


def _describe(keys: list[tuple], counts: dict[tuple, int]) -> str:
    names = ("type", "diffuse", "ambient", "lighting", "zwrite", "backface", "gouraud", "colormat", "shine",
             "layers", "vertex_type")
    return "[" + "; ".join(
        ", ".join(f"{n}={v:#010x}" if n in ("diffuse", "ambient") else f"{n}={v}" for n, v in zip(names, k))
        + f" ({counts[k]} indices)" for k in keys) + "]"
