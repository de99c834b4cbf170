"""Make a static gallery site from folders of models (``retromesh gallery``) or one model's page
(``retromesh view``).

Site layout::

    site/index.html                     cards by folder, search and format filter
    site/assets/viewer.bundle.js        three.js + our viewer (see assets.py), LICENSE-three.txt
    site/models/<root>/<path>.glb       the converted model (self-contained GLB)
    site/models/<root>/<path>.glb.js    the same bytes as base64 (file:// pages cannot fetch)
    site/models/<root>/<path>.html      the model's page: viewer, animations, textures, info
    site/models/<root>/<path>.png       the thumbnail

Models are grouped as a folder conversion groups them (a ``.msh`` with its ``.skl``/``.ani``...);
a file that fails gets a card saying why and the gallery goes on.
"""
from __future__ import annotations

import base64
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import field
from pathlib import Path
from typing import Any

import retromesh

from ..errors import LossWarning, MissingTextureWarning, RetromeshError
from ..fileio import atomic_write_many
from ..records import record
from . import assets, pages, thumbs

__all__ = ["Model", "find_models", "build_gallery", "model_card", "THUMBNAIL"]

#: thumbnail size in pixels (square)
THUMBNAIL = 256


@record
class Model:
    """One model to show: its main file, the companions read with it, where its files go."""
    source: Path
    options: dict[str, Any] = field(default_factory=dict)
    folder: str = ""          # shown as the section heading (relative to the named root)
    stem: str = ""            # site-relative path without extension, e.g. models/mods/x/cow


def find_models(roots: Iterable[Path]) -> list[Model]:
    """Every model under the named folders (or the named files), grouped with companions."""
    from ..batch import group_folder, scannable
    models: list[Model] = []
    used: set[str] = set()
    for root in roots:
        root = Path(root)
        if root.is_file():
            base, files = root.parent, [root]
        else:
            base = root
            files = sorted(p for p in root.rglob("*") if p.is_file() and scannable(p))
        label = root.name or "models"
        while label in used:
            label += "_"
        used.add(label)
        for group in group_folder(files):
            rel = group.source.relative_to(base)
            folder = str(Path(label) / rel.parent) if rel.parent != Path(".") else label
            stem = (Path("models") / label / rel).with_suffix("")
            if any(m.stem == str(stem) for m in models):    # box.b3d beside box.solid
                stem = stem.with_name(rel.name)
            models.append(Model(group.source, dict(group.options), folder, str(stem)))
    return models


def _scene_counts(scene: retromesh.Scene) -> dict[str, int]:
    vertices = triangles = 0
    for mesh in scene.meshes:
        for prim in mesh.primitives:
            vertices += len(prim.positions)
            triangles += prim.triangle_count
    bones = len({j for skin in scene.skins for j in skin.joints})
    return {"vertices": vertices, "triangles": triangles, "bones": bones}


def _write(files: dict[Path, bytes]) -> None:
    atomic_write_many(files)


def _beside(stem: Path, ending: str) -> Path:
    """``stem`` + ``ending`` (stems may hold a dot: ``tank.vxl`` beside ``tank.vox``)."""
    return stem.with_name(stem.name + ending)


def model_card(model: Model, site: Path, *, thumbnail: bool = True) -> dict[str, Any]:
    """Convert one model into the site and return its card (``ok`` False with ``error``)."""
    name = model.source.name
    card: dict[str, Any] = {"name": name, "folder": model.folder, "ok": False,
                            "page": model.stem + ".html"}
    stem = site / model.stem
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossWarning)
        try:
            fmt = retromesh.detect(model.source)
            card["format"] = fmt.name
            doc = retromesh.read(model.source)
            info = fmt.info(doc) if fmt.info else {}
            card["info"] = {k: v for k, v in info.items() if not isinstance(v, (list, dict))}
            card["version"] = info.get("version")
            scene = retromesh.load(model.source, **model.options)
            stem.parent.mkdir(parents=True, exist_ok=True)
            retromesh.save(scene, _beside(stem, ".glb"))
        except (RetromeshError, OSError) as exc:
            card["error"] = str(exc)
            return card
        except Exception as exc:  # a bug: the card says so and the gallery goes on
            card["error"] = f"internal error {type(exc).__name__}: {exc}"
            return card
    missing = sorted({w.message.name or str(w.message) for w in caught
                      if isinstance(w.message, MissingTextureWarning)})
    names = sorted({t.uri or t.name for t in scene.textures if t.uri or t.name})
    card["textures"] = {"found": [t for t in names if t not in missing], "missing": missing}
    card["warnings"] = sorted({str(w.message) for w in caught
                               if issubclass(w.category, LossWarning)
                               and not isinstance(w.message, MissingTextureWarning)})
    card["counts"] = _scene_counts(scene)
    card["variants"] = list(scene.variants)
    card["animations"] = [{"name": a.name or f"animation {i}", "seconds": float(a.duration)}
                          for i, a in enumerate(scene.animations)]
    glb = _beside(stem, ".glb").read_bytes()
    depth = len(Path(model.stem).parts) - 1
    up = "../" * depth
    script = stem.name + ".glb.js"
    _write({_beside(stem, ".glb.js"): b"window.RETROMESH_GLB=\"" + base64.b64encode(glb) + b"\";\n",
            _beside(stem, ".html"): pages.model_page(
                card, assets=up + "assets", glb_script=script, back=up + "index.html").encode()})
    card["ok"] = True
    if thumbnail:
        shot = _beside(stem, ".thumb.html")
        shot.write_text(pages.model_page(card, assets=up + "assets", glb_script=script,
                                         back=None, thumbnail=THUMBNAIL), encoding="utf-8")
        try:
            if thumbs.screenshot(shot, _beside(stem, ".png"), size=THUMBNAIL):
                card["thumbnail"] = model.stem + ".png"
        finally:
            shot.unlink(missing_ok=True)
    return card


def _card_job(args: tuple[Model, Path, bool]) -> dict[str, Any]:
    model, site, thumbnail = args
    return model_card(model, site, thumbnail=thumbnail)


def build_gallery(roots: list[Path], site: Path, *, jobs: int = 1, thumbnails: bool = True,
                  title: str = "retromesh gallery",
                  progress: Callable[[dict[str, Any]], None] | None = None,
                  lua: bool = True) -> list[dict[str, Any]]:
    """Write the whole site into ``site``; returns the cards (one per model). ``lua``: a
    model in a Luanti mod is shown as its mod shows it (runs the mod's Lua, fenced)."""
    site = Path(site)
    models = find_models(roots)
    if lua:
        for m in models:
            m.options["mods"] = {"lua": True}
    bundle, licence = assets.viewer_bundle()
    (site / "assets").mkdir(parents=True, exist_ok=True)
    _write({site / "assets" / "viewer.bundle.js": bundle.read_bytes(),
            site / "assets" / "LICENSE-three.txt": licence.read_bytes()})
    if thumbnails and thumbs.browser() is None:
        warnings.warn("no Chromium found: the gallery has no thumbnails "
                      "(install chromium to get them)", LossWarning, stacklevel=2)
        thumbnails = False
    cards: list[dict[str, Any]] = []
    work = [(m, site, thumbnails) for m in models]
    if jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for card in pool.map(_card_job, work):
                cards.append(card)
                if progress:
                    progress(card)
    else:
        for item in work:
            card = _card_job(item)
            cards.append(card)
            if progress:
                progress(card)
    _write({site / "index.html": pages.index_page(title, cards).encode()})
    return cards

