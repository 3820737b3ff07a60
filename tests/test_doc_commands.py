"""Every ``jaxarc solve`` and ``jaxarc pretrain-programs`` command the README and the guides
show is one today's command line takes: it parses, and ``jaxarc solve``'s flag checks (the
method's flags, ``--prior`` against ``--checkpoint``) accept it.

The commands are read from fenced code blocks (a line ending in ``\\`` goes on on the next)
and from inline code in the prose, where a span may break across lines. Running them would
take hours (the default solve learns every task for a minute), so they are parsed and
checked, not run; ``tests/test_readme.py`` runs the README's quick ``jaxarc`` lines. A
placeholder of the results page (``SOURCE``, ``RUN``) stands for a real value, and a
fragment that leaves out a required flag (``--source``, ``--out``, ``--run-dir``) gets one.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from jaxarc.cli.main import CLIError, build_parser
from jaxarc.cli.solve import _check_flags

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
COMMAND = re.compile(r"^jaxarc (solve|pretrain-programs) -")
PLACEHOLDERS = {"SOURCE": "arc-agi-1/evaluation", "RUN": "runs/some-run"}
REQUIRED = {
    "solve": (("--source", "arc-agi-1/evaluation"), ("--out", "submission.json")),
    "pretrain-programs": (("--source", "arc-agi-1/training"), ("--run-dir", "runs/programs")),
}


def commands_in(text: str) -> list[str]:
    """The ``jaxarc solve`` / ``jaxarc pretrain-programs`` commands of a markdown page that
    give at least one flag, whitespace-normalised, comments after ``  #`` dropped."""
    code, prose, in_code = [], [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            in_code = not in_code
        else:
            (code if in_code else prose).append(line)
    code_lines = re.sub(r"\\\n\s*", " ", "\n".join(code)).splitlines()
    from_code = [line.split("  #")[0] for line in code_lines]
    from_prose = re.findall(r"`([^`]+)`", "\n".join(prose))
    found = [" ".join(command.split()) for command in from_code + from_prose]
    return [command for command in found if COMMAND.match(command)]


def problem_with(command: str) -> str | None:
    """Why today's command line refuses ``command``, in its own one-line words; ``None`` if
    it takes it. Paths are read relative to the working directory."""
    argv = [PLACEHOLDERS.get(word, word) for word in shlex.split(command)[1:]]
    for flag, value in REQUIRED[argv[0]]:
        if flag not in argv:
            argv += [flag, value]
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            args = build_parser().parse_args(argv)
    except SystemExit:
        return stderr.getvalue().strip()
    if argv[0] == "solve":
        try:
            _check_flags(args)
        except CLIError as err:
            return str(err)
    return None


# --- the extraction and the check, tested on samples -------------------------------------------

SAMPLE = """Run `jaxarc solve --source SOURCE --method search
--depth 2 --out s.json`, or `jaxarc solve` alone (no flags: not a command to check).

```bash
jaxarc pretrain-programs --source arc-agi-1/training \\
    --skip 100 --run-dir runs/programs  # about an hour
jaxarc train --preset quick
```
"""


def test_commands_are_found_in_code_blocks_and_inline_code() -> None:
    assert commands_in(SAMPLE) == [
        "jaxarc pretrain-programs --source arc-agi-1/training --skip 100 --run-dir runs/programs",
        "jaxarc solve --source SOURCE --method search --depth 2 --out s.json",
    ]


@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        ("jaxarc solve --source S --prior none --depth 3 --out s.json", "--depth applies to"),
        ("jaxarc solve --method search --prior none", "--prior applies to"),
        ("jaxarc solve --method test-time-rl", "needs --checkpoint"),
        (
            "jaxarc solve --checkpoint benchmarks/results/solve/program_prior_frontier",
            "is a program prior",
        ),
        ("jaxarc solve --method program_rl", "invalid choice"),
        ("jaxarc pretrain-programs --rounds 0", "--rounds"),
    ],
)
def test_the_check_refuses_what_the_command_line_refuses(
    command: str, refusal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    problem = problem_with(command)
    assert problem is not None and refusal in problem, problem


def test_the_check_takes_what_the_command_line_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for command in (
        "jaxarc solve --source SOURCE --out s.json",
        "jaxarc solve --prior none",
        "jaxarc solve --method test-time-rl --checkpoint RUN --tasks-at-once 16",
        "jaxarc pretrain-programs --skip 100 --rounds 2",
    ):
        assert problem_with(command) is None, command


# --- the pages ------------------------------------------------------------------------------


def test_the_pages_show_solve_commands() -> None:
    assert sum(len(commands_in(page.read_text())) for page in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_command_is_taken(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    problems = {c: problem_with(c) for c in commands_in(page.read_text())}
    assert not {c: p for c, p in problems.items() if p}, problems


def test_the_readme_shows_the_default_solve() -> None:
    """The README's way to the best score is the plain default, which no flag changes."""
    readme = commands_in(PAGES[0].read_text())
    assert "jaxarc solve --source arc-agi-1/evaluation --out submission.json" in readme
