"""Issue #11 items 18, 22 and 23: benchmarks print unless asked to write, fetched datasets
are found by ``jaxarc.make`` and Gymnasium, and ``jaxarc eval`` takes generated sources."""

from __future__ import annotations

import json

import pytest

from jaxarc.cli.main import main

TASK = {
    "train": [{"input": [[0, 1], [2, 3]], "output": [[3, 2], [1, 0]]}],
    "test": [{"input": [[1, 1]], "output": [[2, 2]]}],
}


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.json").write_text(json.dumps(TASK))
    return tmp_path


def _written(root) -> list[str]:
    skip = ("cache", "tasks")
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in skip
    )


# -- item 18: `jaxarc bench env|train` print; they write only into --out ---------------------

BENCH_ENV = ["bench", "env", "--source", "tasks", "--formats", "point", "--batch-sizes", "2"]
BENCH_ENV += ["--steps", "2", "--loop-steps", "1", "--repeats", "1"]


def test_bench_env_prints_and_writes_nothing_by_default(workdir, capsys):
    assert main(BENCH_ENV) == 0
    assert "| point | 2 |" in capsys.readouterr().out
    assert _written(workdir) == []  # old default: benchmarks/results/throughput_cpu.{md,json}


@pytest.mark.parametrize("kind", ["env", "train"])
def test_bench_writes_only_into_out(kind):
    from jaxarc.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["bench", kind]).out is None  # old default: benchmarks/results
    assert str(parser.parse_args(["bench", kind, "--out", "d"]).out) == "d"
