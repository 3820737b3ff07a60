"""A stopped ``jaxarc solve --method test-time-rl`` resumes from its progress log: the tasks
it finished are kept, and the same command writes the submission an uninterrupted run
writes; a log of another run is never mixed in."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from limits import run_python_script
from test_solve import _fill_tasks, _solve, _tiny_train_config, _write_dir

from jaxarc.solve.progress_log import ProgressLog, ProgressLogError

HEADER = {"method": "test-time-rl", "tasks_sha256": "ab12", "seed": 0, "jaxarc": "0.1.0"}


def _made(rng: np.random.Generator, *shapes) -> list[tuple[np.ndarray, np.ndarray]]:
    return [tuple(rng.integers(0, 10, s).astype(np.int8) for _ in range(2)) for s in shapes]


def test_progress_log_keeps_finished_tasks_through_a_cut_line_and_refuses_another_run(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "out" / "sub.progress.jsonl"
    log, done = ProgressLog.open(path, HEADER)
    assert done == {} and not path.exists()  # (nothing is written before a task finishes)
    first = {"a": _made(rng, (1, 5)), "b": _made(rng, (5, 1), (30, 30))}
    log.record(first, {"a": {"canvas": 10}, "b": {"canvas": 30, "demos_solved": 0.5}})
    log.record({"c": _made(rng, (2, 3))}, {"c": {"canvas": 10}})
    text = path.read_text()
    path.write_text(text[: text.rindex('"info"')])  # a stop while writing task c
    log, done = ProgressLog.open(path, HEADER)
    assert sorted(done) == ["a", "b"]
    for task, made in first.items():
        for (a, b), (a2, b2) in zip(made, done[task][0], strict=True):
            assert a2.dtype == np.int8 and a2.shape == a.shape
            np.testing.assert_array_equal(a2, a)
            np.testing.assert_array_equal(b2, b)
    assert done["b"][1] == {"canvas": 30, "demos_solved": 0.5}
    log.record({"c": first["a"]}, {"c": {"canvas": 10}})  # after the cut line, on its own
    assert sorted(ProgressLog.open(path, HEADER)[1]) == ["a", "b", "c"]

    with pytest.raises(ProgressLogError, match=r"another run \(seed 0 \(now 1\)\)"):
        ProgressLog.open(path, {**HEADER, "seed": 1})
    with pytest.raises(ProgressLogError, match="tasks_sha256"):
        ProgressLog.open(path, {k: v for k, v in HEADER.items() if k != "tasks_sha256"})
    (tmp_path / "other.json").write_text('{"not": "a log"}')
    with pytest.raises(ProgressLogError, match="not a progress log"):
        ProgressLog.open(tmp_path / "other.json", HEADER)


@pytest.mark.long  # test-time-rl, an experimental method
@pytest.mark.slow
def test_a_killed_test_time_rl_run_resumes_to_the_uninterrupted_submission(
    tmp_path: Path, capsys
) -> None:
    """The run is killed (SIGKILL) right after it logged its first task; the same command
    learns only the other one and writes what a run never stopped writes. A rerun with
    another seed is refused in one line while the log is there, and the log stays."""
    import jax

    from jaxarc.agents import make_train
    from jaxarc.agents.run.checkpoint import save_checkpoint

    source = _write_dir(tmp_path / "tasks", _fill_tasks())
    config = _tiny_train_config(str(source))
    init, _ = make_train(config)
    save_checkpoint(tmp_path / "run" / "checkpoints", 0, init(jax.random.key(0)), config)
    argv = ["--source", str(source), "--method", "test-time-rl", "--budget", "128"]
    argv += ["--checkpoint", str(tmp_path / "run"), "--seed", "1"]
    out = tmp_path / "resumed.json"
    log_path = out.with_suffix(".progress.jsonl")
    script = textwrap.dedent(
        f"""
        import os, signal
        from jaxarc.cli.main import main
        from jaxarc.solve.progress_log import ProgressLog
        real_record = ProgressLog.record
        def dying_record(self, attempts, infos):
            real_record(self, attempts, infos)
            os.kill(os.getpid(), signal.SIGKILL)
        ProgressLog.record = dying_record
        main(["solve", "--no-compile-cache", *{argv!r}, "--out", {str(out)!r}])
        """
    )
    killed = run_python_script(script)
    assert killed.returncode == -9, killed.stderr
    assert not out.exists() and len(log_path.read_text().splitlines()) == 2  # run + fill3
    logged = log_path.read_text()

    code, _, err = _solve(capsys, *argv, "--seed", "2", "--out", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "seed 1 (now 2)" in err, err
    assert not out.exists() and log_path.read_text() == logged

    # fill3's logged attempts are marked, to see that the resumed run takes them as logged
    run_line, task_line = logged.splitlines()
    entry = json.loads(task_line)
    assert entry["task"] == "fill3"
    log_path.write_text(f"{run_line}\n{json.dumps({**entry, 'attempts': [[[[9]], [[9]]]]})}\n")
    code, _, err = _solve(capsys, *argv, "--out", str(out))
    assert code == 0 and "resuming: 1 of 2 tasks" in err, err
    assert not log_path.exists()
    whole = tmp_path / "whole.json"
    assert _solve(capsys, *argv, "--out", str(whole))[0] == 0
    resumed, uninterrupted = json.loads(out.read_text()), json.loads(whole.read_text())
    assert resumed["fill3"] == [{"attempt_1": [[9]], "attempt_2": [[9]]}]
    assert resumed["fill6"] == uninterrupted["fill6"]
    resumed = json.loads(out.with_suffix(".report.json").read_text())
    uninterrupted = json.loads(whole.with_suffix(".report.json").read_text())
    assert resumed["method"] == "test-time-rl"
    assert resumed["resumed_tasks"] == 1 and uninterrupted["resumed_tasks"] == 0
    # fill6 learned from the keys it has in a run never stopped (its sampled rollouts' return)
    assert resumed["tasks"]["fill6"] == uninterrupted["tasks"]["fill6"]
    assert {k: v for k, v in uninterrupted["tasks"]["fill3"].items() if k in entry["info"]} == (
        entry["info"]
    )
