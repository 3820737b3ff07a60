"""``benchmarks/conv_paths.py`` (docs/performance.md, "The trainer": the policy bounds an
update, its convolutions the surrogate step): the policy's convolutions under both compile
settings, their share of a same-run matmul, and the rates of their bare matrix products."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "conv_paths.py"


def test_prints_both_tables_with_shares_of_the_same_run_matmul(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--repeats", "1", "--calls", "1"])
    namespace = runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out
    assert re.search(r"same-run float32 matmul 1028x1028: \d+ GFLOP/s", out), out
    names = list(namespace["SHAPES"])
    for name in names:
        rows = [line for line in out.splitlines() if line.startswith(f"| {name} |")]
        assert len(rows) == 2, out  # one row in each table
        convolution, products = rows
        assert re.search(r"\| \d+% \|$", convolution), convolution
        assert len(re.findall(r"GFLOP/s \(\d+%\)", products)) == 3, products
    # the products' shapes are the convolution's: [N*H*W, 9*C_in] x [9*C_in, C_out], ...
    grids, h, w, c_in, c_out = namespace["SHAPES"][names[0]]
    patch, positions = 9 * c_in, grids * h * w
    assert f"[{positions},{patch}]x[{patch},{c_out}]" in out
    assert f"[{patch},{positions}]x[{positions},{c_out}]" in out
