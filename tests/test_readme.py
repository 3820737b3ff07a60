"""The README's Python code and `jaxarc` command lines run as written (in fresh processes)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S
from test_docs import README_MAX_LINES

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS_HOME = README.parent / "docs" / "index.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def jaxarc_commands() -> list[str]:
    lines = [
        line.split("  #")[0].strip() for block in blocks("bash") for line in block.splitlines()
    ]
    return [line for line in lines if line.startswith("jaxarc ")]


def test_the_readme_is_a_landing_page() -> None:
    assert len(README.read_text().splitlines()) <= README_MAX_LINES
    assert blocks("python") and jaxarc_commands()


def test_the_docs_home_page_has_the_readme_quickstart() -> None:
    home = re.findall(r"```python\n(.*?)```", DOCS_HOME.read_text(), flags=re.S)
    assert home == blocks("python")  # the same code, so the README's test covers both


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_block_runs(index: int, tmp_path: Path) -> None:
    code = blocks("python")[index]
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize("command", jaxarc_commands())
def test_jaxarc_command_runs(command: str, tmp_path: Path) -> None:
    argv = shlex.split(command)[1:]
    result = subprocess.run(
        [sys.executable, "-m", "jaxarc", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip(), command
    for out in re.findall(r"--out (\S+)", command):
        assert (tmp_path / out).is_file(), out
