"""retromesh gallery / view: a static site with thumbnails and a three.js viewer per model,
checked by rendering in headless Chromium."""
from __future__ import annotations

import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from conftest import CORPUS, ROOT
from retromesh.cli import app
from retromesh.gallery import assets, thumbs
from retromesh.gallery.build import build_gallery, find_models

EXAMPLES = ROOT / "examples"


def _viewer_or_skip() -> None:
    try:
        assets.viewer_bundle()
    except Exception as exc:   # no npm, or the registry out of reach
        pytest.skip(f"the gallery viewer cannot be built here: {exc}")


def _chromium_or_skip() -> None:
    if thumbs.browser() is None:
        pytest.skip("Chromium is not installed (tools/setup/50-gallery.sh installs it)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _viewer_or_skip()
    root = tmp_path_factory.mktemp("gallery")
    models = root / "models"
    shutil.copytree(EXAMPLES, models / "examples")
    (models / "broken").mkdir()
    (models / "broken" / "empty.b3d").write_bytes(b"BB3D\x10\x00\x00\x00")
    out = root / "site"
    cards = build_gallery([models], out, jobs=2, thumbnails=thumbs.browser() is not None)
    return out, cards


def test_models_are_grouped_with_their_companions():
    models = {m.source.name: m for m in find_models([EXAMPLES])}
    assert "column.skl" not in models and "column_wave.ani" not in models
    assert models["column.msh"].options["skeleton"].name == "column.skl"
    assert "walk.anm" not in models and "tank.hva" not in models


def test_every_example_gets_a_card_page_and_glb(site):
    out, cards = site
    ok = [c for c in cards if c["ok"]]
    assert len(ok) == len(find_models([EXAMPLES]))
    for c in ok:
        page = out / c["page"]
        assert page.is_file()
        assert page.with_name(page.name[:-5] + ".glb.js").is_file()
        assert "viewer.bundle.js" in page.read_text()
    assert (out / "assets" / "viewer.bundle.js").stat().st_size > 100_000
    assert "MIT" in (out / "assets" / "LICENSE-three.txt").read_text()
    column = next(c for c in ok if c["name"] == "column.msh")
    assert column["counts"]["bones"] > 0 and column["animations"]


def test_a_failing_file_gets_a_card_that_says_why(site):
    out, cards = site
    bad = [c for c in cards if not c["ok"]]
    assert [c["name"] for c in bad] == ["empty.b3d"]
    assert "empty.b3d" in bad[0]["error"]
    index = (out / "index.html").read_text()
    assert "empty.b3d" in index and "failed" in index


def test_site_needs_no_network(site):
    out, _ = site
    for page in out.rglob("*.html"):
        text = page.read_text()
        assert "http://" not in text and "https://" not in text, page


def _ink(img: Image.Image) -> np.ndarray:
    """Pixels that differ from the background colour (the top-left pixel)."""
    a = np.asarray(img.convert("RGB"), dtype=np.int16)
    return np.abs(a - a[0, 0]).sum(axis=2) > 24


def test_thumbnails_are_drawn_and_framed(site):
    _chromium_or_skip()
    out, cards = site
    for c in (c for c in cards if c["ok"]):
        assert c.get("thumbnail"), c["name"]
        ink = _ink(Image.open(out / c["thumbnail"]))
        h, w = ink.shape
        assert ink.mean() > 0.02, f"{c['name']}: blank thumbnail"
        middle = ink[h // 4: 3 * h // 4, w // 4: 3 * w // 4]
        assert middle.mean() > 0.05, f"{c['name']}: the model is not in the middle"


def test_pages_draw_in_a_browser_and_the_model_moves(site, tmp_path):
    _chromium_or_skip()
    out, cards = site
    assert thumbs.screenshot(out / "index.html", tmp_path / "index.png", size=800)
    assert _ink(Image.open(tmp_path / "index.png")).mean() > 0.05
    wiggle = next(c for c in cards if c["name"] == "wiggle.b3d")
    page = out / wiggle["page"]
    shots = []
    for budget in (1500, 2600):
        png = tmp_path / f"wiggle{budget}.png"
        assert thumbs.screenshot(page, png, size=600, budget_ms=budget)
        shots.append(np.asarray(Image.open(png).convert("RGB"), dtype=np.int16))
    view = shots[0][80:450]          # the canvas under the header
    assert (np.abs(view - view[5, 5]).sum(axis=2) > 24).mean() > 0.01, "empty canvas"
    moved = np.abs(shots[0] - shots[1]).sum(axis=2) > 24
    assert moved.mean() > 0.001, "the animated example does not move"


def test_view_writes_a_page_and_prints_it():
    _viewer_or_skip()
    res = CliRunner().invoke(app, ["view", str(EXAMPLES / "wiggle.b3d"), "--no-open"])
    assert res.exit_code == 0, res.output
    page = Path(res.output.strip().splitlines()[0])
    assert page.is_file() and page.suffix == ".html"


def test_gallery_cli_reports_and_exits(tmp_path):
    _viewer_or_skip()
    res = CliRunner().invoke(app, ["gallery", str(EXAMPLES / "overgrowth"), "-o", str(tmp_path / "s"),
                                   "--no-thumbnails"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "s" / "index.html").is_file()
    assert CliRunner().invoke(app, ["gallery", str(tmp_path / "nothing"), "-o",
                                    str(tmp_path / "t")]).exit_code == 2


# -- links to files with any name --------------------------------------------------------------

#: file names a URL would misread unless encoded: ``%`` escapes, ``#`` fragments, ``?`` queries,
#: ``:`` a scheme in a first segment, spaces, ``&`` (HTML), non-ASCII
ODD_NAMES = ("a%2Fb #1.b3d", "what?.b3d", "café ü.b3d", "c:d.b3d", "100% & more.b3d")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]


def _links(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def test_links_are_percent_encoded_and_reach_their_files(tmp_path):
    _viewer_or_skip()
    root = tmp_path / "in #1"
    for folder in (root, root / "dir #2?"):
        folder.mkdir(parents=True)
        shutil.copy(EXAMPLES / "wiggle.png", folder / "wiggle.png")
    for name in ODD_NAMES:
        shutil.copy(EXAMPLES / "wiggle.b3d", root / name)
    shutil.copy(EXAMPLES / "wiggle.b3d", root / "dir #2?" / "ü #3.b3d")
    out = tmp_path / "site"
    cards = build_gallery([root], out, jobs=1, thumbnails=thumbs.browser() is not None)
    assert sorted(c["name"] for c in cards if c["ok"]) == sorted([*ODD_NAMES, "ü #3.b3d"])
    pages = [out / "index.html"] + [out / c["page"] for c in cards]
    linked: set[Path] = set()
    for page in pages:
        for link in _links(page):
            # nothing a browser reads as a scheme, query, fragment or another escape
            assert re.fullmatch(r"[A-Za-z0-9_.~/-]*(%[0-9A-F]{2}[A-Za-z0-9_.~/-]*)*", link), link
            parts = urlsplit(link)
            assert not (parts.scheme or parts.netloc or parts.query or parts.fragment), link
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.name}: {link} -> {target}"
            linked.add(target)
    for c in cards:
        page = (out / c["page"]).resolve()
        assert page in linked and page.with_name(page.name[:-5] + ".glb.js") in linked
        if thumbs.browser() is not None:    # Chromium followed the page's links to the model
            assert (out / c["thumbnail"]).resolve() in linked
            assert _ink(Image.open(out / c["thumbnail"])).mean() > 0.02, c["name"]
    assert (out / "models" / "in #1" / "a%2Fb #1.html").is_file()
    assert 'href="models/in%20%231/a%252Fb%20%231.html"' in (out / "index.html").read_text()


# -- a Luanti mob: the mod's Lua run, textured, with its clip and look menus ------------------

COW_MOD = CORPUS / "luanti" / "mobs_animal"


def _dom(page: Path, budget_ms: int = 3000) -> str:
    """The page's DOM after its scripts ran (headless Chromium's --dump-dom)."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="retromesh-chromium-") as profile:
        done = subprocess.run([thumbs.browser(), "--headless", "--no-sandbox", "--use-angle=swiftshader",
                               "--enable-unsafe-swiftshader", "--disable-gpu-sandbox",
                               f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
                               "--dump-dom", page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=60)
    return done.stdout


def _model_pixels(png: Path) -> np.ndarray:
    """The canvas's pixels that are not its background (under the page's header)."""
    a = np.asarray(Image.open(png).convert("RGB"), dtype=np.int16)[60:460]
    return a[np.abs(a - a[5, 5]).sum(axis=2) > 24]


@pytest.fixture(scope="module")
def cow_site(tmp_path_factory):
    """mobs_animal (its Lua, textures) with only the cow's model, as a gallery."""
    if not (COW_MOD / "models" / "mobs_cow.b3d").is_file():
        pytest.skip("no luanti corpus")
    _viewer_or_skip()
    root = tmp_path_factory.mktemp("cow-gallery")
    mod = root / "mods" / "mobs_animal"
    shutil.copytree(COW_MOD, mod, ignore=lambda d, names: [
        n for n in names if Path(d).name == "models" and n != "mobs_cow.b3d"])
    cards = build_gallery([root / "mods"], root / "site", jobs=1,
                          thumbnails=thumbs.browser() is not None)
    (card,) = cards
    return root / "site", card


def test_a_mob_card_has_its_clips_and_looks(cow_site):
    out, card = cow_site
    assert card["ok"], card
    assert card["variants"] == ["mobs_animal:cow", "mobs_animal:cow#2"]
    seconds = {a["name"]: round(a["seconds"], 2) for a in card["animations"]}
    assert seconds == {"Cow": 3.08, "replace": 1.5, "stand": 2.0, "walk": 1.45, "run": 0.5,
                       "punch": 0.75, "die": 0.8}
    assert {"mobs_cow", "mobs_cow2"} <= set(card["textures"]["found"])
    page = (out / card["page"]).read_text()
    assert '<select id="variant"><option value="0">mobs_animal:cow</option>' \
           '<option value="1">mobs_animal:cow#2</option></select>' in page


def test_a_mob_page_draws_textured_and_its_menus_work(cow_site, tmp_path):
    """In Chromium: the clip menu filled by the viewer (a clip per animation, with its
    seconds), the default look drawn, and the second look (the brown hide, picked in the look
    menu as a user does) drawn in colour. The screenshots were looked at when this was made."""
    _chromium_or_skip()
    out, card = cow_site
    page = out / card["page"]
    dom = _dom(page)
    for clip in ("Cow (3.08 s)", "stand (2.00 s)", "walk (1.45 s)", "run (0.50 s)",
                 "punch (0.75 s)", "die (0.80 s)", "replace (1.50 s)"):
        assert f">{clip}</option>" in dom, clip
    assert 'data-loaded="1"' in dom
    assert thumbs.screenshot(page, tmp_path / "cow.png", size=600, budget_ms=3000)
    first = _model_pixels(tmp_path / "cow.png")
    assert len(first) > 0.05 * 400 * 600                       # the cow is drawn
    # the same page with the look menu switched to the second look once the viewer says the
    # model is loaded (a fixed delay raced the loading on a busy machine)
    pick = ("<script>const t = setInterval(() => {if (document.body.dataset.loaded !== '1') "
            "return; clearInterval(t); const s = document.getElementById('variant'); "
            "s.value = '1'; s.dispatchEvent(new Event('change'))}, 100)</script></body>")
    second_page = page.with_name("look2.html")
    second_page.write_text(page.read_text().replace("</body>", pick))
    assert thumbs.screenshot(second_page, tmp_path / "cow2.png", size=600, budget_ms=3000)
    second = _model_pixels(tmp_path / "cow2.png")
    chroma = second.max(axis=1) - second.min(axis=1)
    assert (chroma > 20).mean() > 0.5, "the brown look is not drawn in colour"
    grey = first.max(axis=1) - first.min(axis=1)
    assert (grey > 20).mean() < 0.1                   # (mobs_cow.png is a black-and-white hide)
    keep = os.environ.get("RETROMESH_SCREENSHOT")
    if keep:
        shutil.copyfile(tmp_path / "cow2.png", keep)


# -- a LithTech model in a game's folders: its skins found as the game finds them -------------

@pytest.fixture(scope="module")
def lithtech_site(tmp_path_factory):
    """A NOLF-layout resource folder (``Chars/Models/Hero_Action.abc``, its skins under
    ``Chars/Skins`` named by ``Attributes/modelbutes.txt``) and ModelEdit's ``model.lta``."""
    from retromesh.formats.lithtech import dtx_samples
    _viewer_or_skip()
    root = tmp_path_factory.mktemp("lithtech-gallery")
    game = root / "models" / "game"
    dtx_samples.write_game_layout(game, (EXAMPLES / "lithtech" / "model_v12.abc").read_bytes())
    shutil.copyfile(EXAMPLES / "lithtech" / "model.lta", root / "models" / "model.lta")
    cards = build_gallery([root / "models"], root / "site", jobs=1,
                          thumbnails=thumbs.browser() is not None)
    return root / "site", {c["name"]: c for c in cards}


def test_a_lithtech_card_wears_its_skins(lithtech_site):
    """Skins are no models of their own (no card for a .dtx); the model's card lists them
    found, and the .lta gets a card too."""
    out, cards = lithtech_site
    assert set(cards) == {"Hero_Action.abc", "model.lta"}
    assert all(c["ok"] for c in cards.values()), cards
    hero = cards["Hero_Action.abc"]
    found = " ".join(hero["textures"]["found"]).lower()
    assert "hero_action" in found and not hero["textures"]["missing"], hero["textures"]


def test_a_lithtech_page_draws_its_skin(lithtech_site, tmp_path):
    """In Chromium: the model's page draws it in the skin's warm checks (an untextured model
    is grey). The screenshot was looked at when this was made."""
    _chromium_or_skip()
    out, cards = lithtech_site
    page = out / cards["Hero_Action.abc"]["page"]
    assert thumbs.screenshot(page, tmp_path / "hero.png", size=600, budget_ms=3000)
    drawn = _model_pixels(tmp_path / "hero.png")
    assert len(drawn) > 0.02 * 400 * 600
    chroma = drawn.max(axis=1) - drawn.min(axis=1)
    assert (chroma > 60).mean() > 0.3, "the skin is not drawn"
    keep = os.environ.get("RETROMESH_LITHTECH_SCREENSHOT")
    if keep:
        shutil.copyfile(tmp_path / "hero.png", keep)
