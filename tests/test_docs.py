"""The documentation holds together: every relative link and picture in README.md, CHANGELOG.md
and docs/*.md points at a file that exists (and at a heading that exists, where it names one),
and the README stays short enough to read."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250

#: pages other branches are writing at the same time: a link to one of them is accepted while
#: the file is not there yet, and checked like any other once it is
PENDING: set[str] = set()     # links to pages not written yet (none now)

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~)")


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str, inline_code: bool = False) -> str:
    """The text without fenced code blocks, and without inline code unless ``inline_code`` (links
    in code are examples; headings keep their code)."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line if inline_code else re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """The anchor a forge (GitHub, Gitea, GitLab) gives a heading."""
    text = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _prose(page.read_text(encoding="utf-8"), inline_code=True).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    return _LINK.findall(_prose(page.read_text(encoding="utf-8")))


def _is_external(target: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", target) is not None


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert page.is_file(), page
    broken = []
    for target in links(page):
        if _is_external(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        rel = dest.relative_to(ROOT).as_posix() if dest.is_relative_to(ROOT) else str(dest)
        if not dest.exists():
            if rel not in PENDING:
                broken.append(f"{target}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {rel}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_page_is_linked_from_the_index():
    index = ROOT / "docs" / "README.md"
    linked = {(index.parent / t.partition("#")[0]).resolve() for t in links(index)
              if not _is_external(t)}
    orphans = [p.name for p in (ROOT / "docs").glob("*.md") if p != index and p.resolve() not in linked]
    assert not orphans, f"docs/README.md does not link {orphans}"


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_pictures_exist_and_are_small():
    for page in pages():
        for target in links(page):
            if target.lower().endswith((".png", ".jpg", ".gif", ".svg")) and not _is_external(target):
                picture = page.parent / target
                assert picture.is_file(), f"{page.name}: {target}"
                assert picture.stat().st_size < 400_000, f"{target} is large for a docs picture"


def test_link_checker_finds_broken_links(tmp_path):
    page = tmp_path / "p.md"
    (tmp_path / "there.md").write_text("# A title, with `code`\n\n## Twice\n\n## Twice\n")
    page.write_text("[ok](there.md#a-title-with-code) [twice](there.md#twice-1) ![x](gone.png)\n"
                    "```\n[in code](nowhere.md)\n```\n[web](https://example.org/x) [bad](there.md#nope)\n")
    found = links(page)
    assert found == ["there.md#a-title-with-code", "there.md#twice-1", "gone.png",
                     "https://example.org/x", "there.md#nope"]
    assert anchors(tmp_path / "there.md") == {"a-title-with-code", "twice", "twice-1"}


def test_the_format_table_is_what_the_formats_declare():
    """docs/formats.md holds the table ``retromesh formats --markdown`` prints (regenerate it
    with that command when a format is added or changes)."""
    from retromesh.clitools.report import format_table
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    begin = "<!-- begin: retromesh formats --markdown -->\n"
    end = "\n<!-- end: retromesh formats --markdown -->"
    assert begin in text and end in text
    assert text.split(begin, 1)[1].split(end, 1)[0] == "\n".join(format_table())
