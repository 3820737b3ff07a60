"""``jaxarc data list|info|fetch`` through ``jaxarc.cli.main.main`` (output and exit codes)."""

from __future__ import annotations

import json
import re

import pytest

from jaxarc.cli.main import main


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(tmp_path / "cache"))


def _field(out: str, name: str) -> str:
    match = re.search(rf"^{name}:\s+(.*)$", out, re.MULTILINE)
    assert match, f"no {name!r} line in:\n{out}"
    return match.group(1)


def test_list_shows_bundled_sources_with_counts(capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name, count in [
        ("arc-agi-1/training", 400),
        ("arc-agi-1/evaluation", 400),
        ("arc-agi-2/training", 1000),
        ("arc-agi-2/evaluation", 120),
    ]:
        assert re.search(rf"^\s+{re.escape(name)}\s+{count} tasks", out, re.MULTILINE)
    for dataset in ("conceptarc", "miniarc", "arc-agi-1", "arc-agi-2"):
        assert re.search(rf"^\s+{dataset}\s+\S+\s+not fetched", out, re.MULTILINE)


def test_info_on_a_directory(capsys, miniarc_dir):
    raw = [json.loads(p.read_text()) for p in sorted(miniarc_dir.rglob("*.json"))]
    assert main(["data", "info", str(miniarc_dir), "--canvas", "5x5"]) == 0
    out = capsys.readouterr().out
    assert _field(out, "tasks") == "149"
    assert _field(out, "canvas") == "5x5"
    demos = sum(len(t["train"]) for t in raw)
    tests = sum(len(t["test"]) for t in raw)
    assert _field(out, "demo pairs").startswith(
        f"{demos} (at most {max(len(t['train']) for t in raw)}"
    )
    assert _field(out, "test pairs").startswith(f"{tests} ")
    assert _field(out, "largest grid").startswith("5x5")
    # colour histogram equals a direct count over the JSON grids
    counts = [0] * 10
    for task in raw:
        for pair in task["train"] + task["test"]:
            for grid in pair.values():
                for row in grid:
                    for cell in row:
                        counts[cell] += 1
    for colour, count in enumerate(counts):
        assert re.search(rf"^\s+{colour}:\s+{count}\s", out, re.MULTILINE)


def test_info_on_a_bundled_source(capsys):
    assert main(["data", "info", "arc-agi-2/evaluation"]) == 0
    out = capsys.readouterr().out
    assert _field(out, "source") == "arc-agi-2/evaluation"
    assert _field(out, "tasks") == "120"
    assert _field(out, "largest grid").startswith("30x30")


def test_info_reports_bad_data_as_a_user_error(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"train": [{"input": [[1, 2], [3]], "output": [[1]]}], "test": []}))
    assert main(["data", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxarc: error: ")
    assert str(bad) in err and "'bad'" in err and "train[0].input" in err and "ragged rows" in err


def test_info_skip_invalid_lists_what_was_skipped(capsys, tmp_path):
    good = {"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[3]]}]}
    bad = {"train": [{"input": [[1]], "output": [[20]]}], "test": [{"input": [[3]]}]}
    path = tmp_path / "challenges.json"
    path.write_text(json.dumps({"good": good, "bad": bad}))
    assert main(["data", "info", str(path), "--skip-invalid"]) == 0
    out, err = capsys.readouterr()
    # the loader's warning, as every command-line warning: one line on stderr
    (warning,) = err.splitlines()
    assert warning.startswith("jaxarc: warning: ") and "loaded 1 tasks, skipped 1" in warning
    assert _field(out, "tasks") == "1"
    assert "skipped 1" in out and "task 'bad', train[0].output: colour 20" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["data", "info", "arc-agi-1/training", "--canvas", "thirty"], "--canvas must look like"),
        (["data", "info", "no-such-source"], "unknown task source 'no-such-source'"),
        (["data", "info", "miniarc"], "not fetched yet"),
    ],
)
def test_user_errors_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_info_with_a_too_small_canvas(capsys, miniarc_dir):
    assert main(["data", "info", str(miniarc_dir), "--canvas", "3x3"]) == 2
    assert "larger than the canvas 3x3" in capsys.readouterr().err
