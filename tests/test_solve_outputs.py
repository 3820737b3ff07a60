"""Where ``jaxarc solve`` and ``jaxarc pretrain-programs`` write is checked before any work:
a path that cannot be written is one line and exit code 2, and nothing is written; a
stopped pretraining resumes from its last round (``jaxarc.solve.program_prior``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxarc.cli.main import main
from jaxarc.solve.prior_store import load_prior, pretrain_and_save, resume_point, save_prior
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_prior import PriorConfig, PriorError, initial_prior
from jaxarc.solve.program_rl import ProgramRLConfig

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_SKIP = "as root, read-only permission bits do not stop a write"


def _flip(name: str, seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(0, 10, (3, 3)).astype(np.int8) for _ in range(3)]
    return Problem(
        name,
        tuple(inputs[:2]),
        tuple(np.fliplr(g) for g in inputs[:2]),
        (inputs[2],),
    )


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    """A directory with one ARC task file (a left-right flip)."""
    task = _flip("flip", 0)
    body = {
        "train": [
            {"input": a.tolist(), "output": b.tolist()}
            for a, b in zip(task.demo_inputs, task.demo_outputs, strict=True)
        ],
        "test": [{"input": task.test_inputs[0].tolist()}],
    }
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "flip.json").write_text(json.dumps(body))
    return root


def _run(capsys, *argv: str) -> tuple[int, str]:
    try:
        code = main([*argv])
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def _refused(capsys, argv: list[str], message: str) -> None:
    code, err = _run(capsys, *argv)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "internal error" not in err


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_every_solve_output_path_is_checked_before_the_first_task(
    tasks: Path, tmp_path: Path, capsys
) -> None:
    """Each of these used to fail only at the final write, after the whole solve (or as an
    internal error); the program-rl default would learn for minutes first."""
    a_file = tmp_path / "f.json"
    a_file.write_text("{}")
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    (tmp_path / "x.report.json").mkdir()
    (tmp_path / "t.progress.jsonl").mkdir()
    base = ["solve", "--no-compile-cache", "--source", str(tasks), "--out"]
    before = _listing(tmp_path)
    for out, message in [
        (".", "--out .: not a file name"),
        ("", "--out '': not a file name"),
        (f"{a_dir}/", "not a file name"),
        (str(a_file / "x.json"), f"{a_file} is a file, not a directory"),
        (str(a_file / "deeper" / "x.json"), f"{a_file} is a file, not a directory"),
        (str(a_dir), "a directory; give a file name"),
    ]:
        _refused(capsys, [*base, out], message)
    argv = [*base, str(tmp_path / "x.json")]
    _refused(capsys, argv, f"--out (its report) {tmp_path}/x.report.json: a directory")
    argv = [*base, str(tmp_path / "t.json"), "--method", "test-time-rl", "--checkpoint", "run"]
    _refused(capsys, argv, "--out (its progress log)")
    assert _listing(tmp_path) == before  # nothing written, nothing removed


@pytest.mark.skipif(AS_ROOT, reason=ROOT_SKIP)
def test_a_read_only_out_directory_is_refused_before_the_first_task(
    tasks: Path, tmp_path: Path, capsys
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        argv = ["solve", "--source", str(tasks), "--out", str(locked / "s.json")]
        _refused(capsys, argv, "is not writable")
        argv = ["pretrain-programs", "--source", str(tasks), "--run-dir", str(locked / "p")]
        _refused(capsys, argv, "is not writable")
    finally:
        locked.chmod(0o700)


def test_pretrain_refuses_a_run_dir_it_cannot_use_before_training(
    tasks: Path, tmp_path: Path, capsys
) -> None:
    a_file = tmp_path / "prior-file"
    a_file.write_text("not a directory")
    base = ["pretrain-programs", "--no-compile-cache", "--source", str(tasks), "--run-dir"]
    _refused(capsys, [*base, str(a_file)], "--run-dir")
    _refused(capsys, [*base, str(a_file / "run")], f"{a_file} is a file, not a directory")
    assert a_file.read_text() == "not a directory"
    # another run's prior is not overwritten without --fresh (its source differs)
    other = tmp_path / "other"
    save_prior(
        other,
        initial_prior(ProgramRLConfig()),
        PriorConfig(),
        {"source": "elsewhere", "seed": 0, "tasks": ["flip"], "rounds_done": 1, "found": {}},
    )
    kept = (other / "prior.json").read_text()
    _refused(capsys, [*base, str(other)], "differs in: source); give --fresh to overwrite it")
    # a prior without the record of its programs cannot be resumed either
    (other / "prior.json").write_text(json.dumps({"config": PriorConfig().record()}))
    _refused(capsys, [*base, str(other)], "give --fresh")
    (other / "prior.json").write_text(kept)
    # this run's prior with every round done: nothing to resume
    source = f"{tasks}[0:1]"
    info = {"source": source, "seed": 0, "tasks": ["flip"], "rounds_done": 1, "found": {}}
    save_prior(other, initial_prior(ProgramRLConfig()), PriorConfig(), info)
    _refused(capsys, [*base, str(other)], "already holds this run's 1 rounds; give --fresh")


@pytest.mark.slow  # learns two tiny tasks for three rounds and two (~20 s)
def test_a_stopped_pretraining_resumes_to_the_prior_an_uninterrupted_run_makes(
    tmp_path: Path,
) -> None:
    problems = [_flip("flip0", 1), _flip("turn", 2)]
    small = ProgramRLConfig(updates=20, group_size=16, program_length=3)
    config = PriorConfig(rounds=2, fit_steps=20, program=small)
    whole = tmp_path / "whole"
    pretrain_and_save(problems, config, whole, seed=3, source="s")

    class Stop(Exception):
        pass

    def stop_in_round_two(done: int, total: int) -> None:
        if done == len(problems):  # the first task of the second round
            raise Stop

    stopped = tmp_path / "stopped"
    with pytest.raises(Stop):
        pretrain_and_save(problems, config, stopped, seed=3, source="s", progress=stop_in_round_two)
    assert json.loads((stopped / "prior.json").read_text())["rounds_done"] == 1
    state = resume_point(stopped, problems, config, seed=3, source="s")
    assert state is not None and len(state.history) == 1
    pretrain_and_save(problems, config, stopped, seed=3, source="s", resume=state)
    np.testing.assert_array_equal(load_prior(stopped)[0], load_prior(whole)[0])
    done, made = (json.loads((d / "prior.json").read_text()) for d in (stopped, whole))
    assert done["rounds_done"] == made["rounds_done"] == 2 and done["found"] == made["found"]
    assert [r["tasks_solved"] for r in done["history"]] == [
        r["tasks_solved"] for r in made["history"]
    ]
    with pytest.raises(PriorError, match="already holds this run's 2 rounds"):
        resume_point(stopped, problems, config, seed=3, source="s")
    with pytest.raises(PriorError, match=r"differs in: seed"):
        resume_point(stopped, problems, config, seed=4, source="s")
    assert resume_point(tmp_path / "empty", problems, config, seed=3, source="s") is None
    jax.clear_caches()  # (the small learner's programs are not needed again)
