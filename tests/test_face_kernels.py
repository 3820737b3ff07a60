"""``benchmarks/face_kernels.py`` (docs/design-notes.md): traces a real compiled face
scan and attributes the trace's kernel times to the scan body's kernels."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "face_kernels.py"


def test_face_kernels_lists_the_auto_reset_loop_and_its_kernels(monkeypatch, capsys):
    argv = [str(SCRIPT), "gymnax", "--batch", "256", "--steps", "3", "--episode-steps", "2"]
    monkeypatch.setattr(sys, "argv", [*argv, "--top", "200"])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    table = capsys.readouterr().out
    rows = re.findall(r"^\| (\S+) \| ([\d.]+) \| ([\d.]+) \|", table, re.MULTILINE)
    assert rows, table
    # Episodes of 2 steps: every environment resets every other step, so the auto-reset's
    # chunk loop (a while loop of the step) runs and is timed.
    loops = [name for name, _, calls in rows if name.startswith("while.") and float(calls) > 0]
    assert loops, table
    assert all(float(us) >= 0 for _, us, _ in rows)

    # --inside lists the kernels run within one of those loops.
    monkeypatch.setattr(sys, "argv", [*argv, "--top", "200", "--inside", loops[0]])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    inside = capsys.readouterr().out.split(f"inside {loops[0]}")[1]
    assert re.search(r"^\| \S+ \| [\d.]+ \| [\d.]+ \|$", inside, re.MULTILINE), inside
