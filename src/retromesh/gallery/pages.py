"""The gallery's HTML: the index of cards and one page per model (plain HTML, a few lines of JS)."""
from __future__ import annotations

import json
from html import escape
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

__all__ = ["index_page", "model_page"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#222}
header{padding:12px 20px;background:#2b2f36;color:#fff;display:flex;gap:12px;align-items:center;
flex-wrap:wrap}
header h1{font-size:18px;margin:0 12px 0 0}
input,select{font:inherit;padding:4px 6px}
main{padding:16px 20px}
h2{font-size:15px;margin:20px 0 8px;color:#555}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:12px}
.card{background:#fff;border-radius:6px;box-shadow:0 1px 3px #0002;overflow:hidden}
.card a{color:inherit;text-decoration:none}
.card img,.card .noimg{width:100%;aspect-ratio:1;object-fit:contain;background:#f2f2f2;display:block}
.card .noimg{display:flex;align-items:center;justify-content:center;color:#999}
.card .body{padding:8px 10px}
.card .name{font-weight:600;word-break:break-all}
.card .meta{color:#666;font-size:12px}
.card.failed{border-left:4px solid #c0392b}
.warn{color:#a35d00;font-size:12px}
.err{color:#c0392b;font-size:12px;word-break:break-word}
#viewer{width:100%;height:70vh;background:#2b2f36}
.controls{display:flex;gap:14px;align-items:center;padding:8px 20px;background:#fff}
table{border-collapse:collapse;margin-top:8px}
td{padding:2px 12px 2px 0;vertical-align:top}
"""

_FILTER_JS = """
const q = document.getElementById('q'), f = document.getElementById('fmt');
function apply(){
  const t = q.value.toLowerCase(), k = f.value;
  document.querySelectorAll('.card').forEach(c => {
    const show = (!t || c.dataset.name.includes(t)) && (!k || c.dataset.format === k);
    c.style.display = show ? '' : 'none';
  });
  document.querySelectorAll('section').forEach(s => {
    s.style.display = s.querySelector('.card:not([style*="none"])') ? '' : 'none';
  });
}
q.addEventListener('input', apply); f.addEventListener('change', apply);
"""


def _link(path: str) -> str:
    """A site-relative file path as the URL an ``href``/``src`` holds: each segment
    percent-encoded, so a file named ``a%2Fb #1.html`` is not read as folders ``a/b`` and a
    fragment ``#1`` (nor ``c:d.html`` as a scheme); ``..`` stays. Safe in an attribute as it is."""
    return "/".join(quote(part, safe="") for part in PurePath(path).parts)


def _counts(card: dict[str, Any]) -> str:
    c = card.get("counts", {})
    parts = [f"{c[k]:,} {label}" for k, label in (("vertices", "vertices"),
                                                   ("triangles", "triangles"),
                                                   ("bones", "bones")) if c.get(k)]
    anims = card.get("animations", [])
    if anims:
        parts.append(f"{len(anims)} animation{'s' if len(anims) != 1 else ''}")
    return ", ".join(parts)


def _card(card: dict[str, Any]) -> str:
    name = escape(card["name"])
    fmt = escape(card.get("format", "?"))
    if not card["ok"]:
        return (f'<div class="card failed" data-name="{escape(card["name"].lower())}" '
                f'data-format="{fmt}"><div class="noimg">failed</div><div class="body">'
                f'<div class="name">{name}</div><div class="meta">{fmt}</div>'
                f'<div class="err">{escape(card["error"])}</div></div></div>')
    thumb = (f'<img loading="lazy" src="{_link(card["thumbnail"])}" alt="{name}">'
             if card.get("thumbnail") else '<div class="noimg">no thumbnail</div>')
    version = f' v{escape(str(card["version"]))}' if card.get("version") is not None else ""
    tex = card.get("textures", {})
    textures = ""
    if tex.get("found") or tex.get("missing"):
        textures = (f'<div class="meta">textures: {len(tex.get("found", []))} found'
                    + (f', <span class="warn">{len(tex["missing"])} missing</span>'
                       if tex.get("missing") else "") + "</div>")
    warns = "".join(f'<div class="warn">{escape(w)}</div>' for w in card.get("warnings", [])[:3])
    return (f'<div class="card" data-name="{escape(card["name"].lower())}" data-format="{fmt}">'
            f'<a href="{_link(card["page"])}">{thumb}</a><div class="body">'
            f'<div class="name"><a href="{_link(card["page"])}">{name}</a></div>'
            f'<div class="meta">{fmt}{version}</div><div class="meta">{escape(_counts(card))}</div>'
            f'{textures}{warns}</div></div>')


def index_page(title: str, cards: list[dict[str, Any]]) -> str:
    """The site's front page: cards grouped by folder, a search box and a format filter."""
    folders: dict[str, list[dict[str, Any]]] = {}
    for c in sorted(cards, key=lambda c: (c["folder"], c["name"].lower())):
        folders.setdefault(c["folder"], []).append(c)
    formats = sorted({c.get("format", "?") for c in cards})
    options = "".join(f'<option value="{escape(f)}">{escape(f)}</option>' for f in formats)
    sections = "".join(
        f'<section><h2>{escape(folder or ".")}</h2><div class="cards">'
        + "".join(_card(c) for c in items) + "</div></section>"
        for folder, items in folders.items())
    failed = sum(not c["ok"] for c in cards)
    summary = f"{len(cards)} models" + (f", {failed} failed" if failed else "")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<style>{_STYLE}</style></head><body><header><h1>{escape(title)}</h1>'
            f'<input id="q" type="search" placeholder="search by name">'
            f'<select id="fmt"><option value="">all formats</option>{options}</select>'
            f'<span>{escape(summary)}</span></header><main>{sections}</main>'
            f'<script>{_FILTER_JS}</script></body></html>')


def model_page(card: dict[str, Any], *, assets: str, glb_script: str, back: str | None,
               thumbnail: int = 0) -> str:
    """One model's page: the interactive viewer (or, with ``thumbnail``, the bare framed view
    the thumbnail is shot from, ``thumbnail`` pixels square) and its native ``info``."""
    opts = json.dumps({"thumbnail": bool(thumbnail)})
    viewer = (f'<div id="viewer"></div><div id="status">loading…</div>'
              f'<script>window.RETROMESH = {opts};</script>'
              f'<script src="{_link(glb_script)}"></script>'
              f'<script src="{_link(assets + "/viewer.bundle.js")}"></script>')
    if thumbnail:
        return (f'<!doctype html><html><head><meta charset="utf-8"><style>html,body{{margin:0;'
                f'height:100%;overflow:hidden}}#viewer{{width:{thumbnail}px;height:{thumbnail}px}}'
                f'#status{{display:none}}'
                f'</style></head><body>{viewer}</body></html>')
    rows = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>"
                   for k, v in card.get("info", {}).items())
    anims = "".join(f"<tr><td>{escape(a['name'])}</td><td>{a['seconds']:.2f} s</td></tr>"
                    for a in card.get("animations", []))
    tex = card.get("textures", {})
    textures = "".join(f"<tr><td>{escape(t)}</td><td>found</td></tr>" for t in tex.get("found", []))
    textures += "".join(f'<tr><td>{escape(t)}</td><td class="warn">missing</td></tr>'
                        for t in tex.get("missing", []))
    back_link = f'<a href="{_link(back)}" style="color:#fff">← all models</a>' if back else ""
    looks = "".join(f'<option value="{i}">{escape(v)}</option>'
                    for i, v in enumerate(card.get("variants", [])))
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(card["name"])}</title>'
            f'<style>{_STYLE}</style></head><body><header>{back_link}<h1>{escape(card["name"])}</h1>'
            f'<span>{escape(card.get("format", ""))}</span></header>{viewer}'
            f'<div class="controls"><label>animation <select id="animation"></select></label>'
            + (f'<label>look <select id="variant">{looks}</select></label>' if looks else "")
            + f'<label><input type="checkbox" id="wireframe"> wireframe</label>'
            f'<label><input type="checkbox" id="skeleton"> skeleton</label>'
            f'<span>{escape(_counts(card))}</span></div><main>'
            + (f"<h2>Animations</h2><table>{anims}</table>" if anims else "")
            + (f"<h2>Textures</h2><table>{textures}</table>" if textures else "")
            + f"<h2>Native info</h2><table>{rows}</table>"
            + "".join(f'<div class="warn">{escape(w)}</div>' for w in card.get("warnings", []))
            + "</main></body></html>")
