"""A program prior records the content hashes of the tasks it was pretrained on
(:func:`jaxarc.solve.problem.task_content_hash`), and ``jaxarc solve`` leaves the tasks of
a source it has seen out of the score, whatever their ids: ``arc-agi-2/training`` holds most
ARC-AGI-1 evaluation tasks, under the same ids and with their demonstrations reordered."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jaxarc.cli.main import main
from jaxarc.data import load_bank
from jaxarc.solve.prior_store import pretrain_and_save, save_prior, seen_by_prior
from jaxarc.solve.problem import (
    Problem,
    known_test_outputs,
    problems_from_bank,
    task_content_hash,
)
from jaxarc.solve.program_prior import PriorConfig, PriorError, initial_prior
from jaxarc.solve.program_rl import ProgramRLConfig
from jaxarc.solve.submission import score_submission

TINY = ProgramRLConfig(updates=2, group_size=8, program_length=2, exploring_starts=2)
TINY_PRIOR = PriorConfig(rounds=1, fit_steps=5, program=TINY)


def _task(name: str, seed: int, rule=np.fliplr, demos: int = 3) -> Problem:
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(0, 10, (3, 4)).astype(np.int8) for _ in range(demos + 1)]
    return Problem(
        name, tuple(inputs[:demos]), tuple(rule(g) for g in inputs[:demos]), (inputs[demos],)
    )


def _write_tasks(
    root: Path, tasks: list[Problem], test_output=np.fliplr, exist_ok: bool = False
) -> Path:
    """One ARC JSON file per task, with ``test_output`` of each test input as its output."""
    root.mkdir(parents=True, exist_ok=exist_ok)
    for task in tasks:
        body = {
            "train": [
                {"input": a.tolist(), "output": b.tolist()}
                for a, b in zip(task.demo_inputs, task.demo_outputs, strict=True)
            ],
            "test": [
                {"input": g.tolist(), "output": test_output(g).tolist()} for g in task.test_inputs
            ],
        }
        (root / f"{task.task_id}.json").write_text(json.dumps(body))
    return root


def _renamed(task: Problem, name: str, order: list[int]) -> Problem:
    """``task`` under another id, its demonstrations listed in ``order``."""
    return Problem(
        name,
        tuple(task.demo_inputs[k] for k in order),
        tuple(task.demo_outputs[k] for k in order),
        task.test_inputs,
    )


def test_the_content_hash_ignores_ids_order_and_test_outputs_and_sees_every_cell(
    tmp_path: Path,
) -> None:
    task = _task("a", 0)
    digest = task_content_hash(task)
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert task_content_hash(_renamed(task, "b", [2, 0, 1])) == digest
    # the test outputs are not part of a task's content: two files differing only there
    flipped = _write_tasks(tmp_path / "flipped", [task], test_output=np.fliplr)
    blank = _write_tasks(tmp_path / "blank", [task], test_output=np.zeros_like)
    [from_flipped], [from_blank] = (problems_from_bank(load_bank(d)) for d in (flipped, blank))
    assert task_content_hash(from_flipped) == task_content_hash(from_blank) == digest
    changed_cell = task.demo_outputs[1].copy()
    changed_cell[2, 3] = (changed_cell[2, 3] + 1) % 10
    changed_test = task.test_inputs[0].copy()
    changed_test[0, 0] = (changed_test[0, 0] + 1) % 10
    others = [
        Problem(
            "a",
            task.demo_inputs,
            (*task.demo_outputs[:1], changed_cell, *task.demo_outputs[2:]),
            task.test_inputs,
        ),
        Problem("a", task.demo_inputs, task.demo_outputs, (changed_test,)),
        # the same cells in another shape
        Problem("a", task.demo_inputs, task.demo_outputs, (task.test_inputs[0].reshape(4, 3),)),
        # a demonstration input paired with another output
        Problem("a", task.demo_inputs, task.demo_outputs[::-1], task.test_inputs),
        # one pair fewer, and also with a demonstration input as the test input
        Problem("a", task.demo_inputs[:2], task.demo_outputs[:2], task.test_inputs),
        Problem("a", task.demo_inputs[:2], task.demo_outputs[:2], (task.demo_inputs[2],)),
    ]
    hashes = {task_content_hash(other) for other in others}
    assert digest not in hashes and len(hashes) == len(others)


def test_a_score_leaves_out_the_tasks_it_is_told_to() -> None:
    grid = np.array([[1, 2]], np.int8)
    right = [{"attempt_1": grid.tolist(), "attempt_2": grid.tolist()}]
    wrong = [{"attempt_1": [[0, 0]], "attempt_2": [[0, 0]]}]
    submission = {"seen": right, "new": wrong, "other": right}
    outputs = {task_id: [grid] for task_id in submission}
    full = score_submission(submission, outputs)
    assert (full["scored_tasks"], full["solved_tasks"]) == (3, 2)
    score = score_submission(submission, outputs, leave_out=["seen"])
    assert (score["scored_tasks"], score["solved_tasks"], score["scored_pairs"]) == (2, 1, 2)
    assert set(score["tasks"]) == {"new", "other"} and score["solve_rate"] == 0.5


def test_a_prior_that_records_no_hashes_sees_nothing_known_and_bad_hashes_are_named(
    tmp_path: Path,
) -> None:
    tasks = [_task("a", 0), _task("b", 1)]
    old = tmp_path / "old"
    save_prior(old, initial_prior(TINY), TINY_PRIOR, {"tasks": ["a"]})
    assert seen_by_prior(old, tasks) is None
    broken = tmp_path / "broken"
    save_prior(broken, initial_prior(TINY), TINY_PRIOR, {"task_hashes": "abc"})
    with pytest.raises(PriorError, match=r"broken/prior.json: 'task_hashes' is not a list"):
        seen_by_prior(broken, tasks)


def _solve(capsys, source: Path, prior: Path, out: Path, *extra: str) -> tuple[str, dict]:
    argv = ["solve", "--no-compile-cache", "--source", str(source), "--prior", str(prior)]
    code = main([*argv, "--out", str(out), *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out, json.loads(out.with_suffix(".report.json").read_text())


@pytest.mark.slow  # pretrains on three tiny tasks and solves four (~20 s)
def test_solve_names_the_tasks_the_prior_was_pretrained_on_and_scores_only_the_others(
    tmp_path: Path, capsys
) -> None:
    """Set A pretrains a prior; set B holds two of A's tasks under other ids (one with its
    demonstrations reordered), one of A's ids with other content, and a new task: B's
    copies are seen, solved, written and left out of the score."""
    train = [_task("a0", 0), _task("a1", 1), _task("a2", 2)]
    source_a = _write_tasks(tmp_path / "a", train)
    problems_a = problems_from_bank(load_bank(source_a))
    prior = tmp_path / "prior"
    pretrain_and_save(problems_a, TINY_PRIOR, prior, source=str(source_a))
    meta = json.loads((prior / "prior.json").read_text())
    assert meta["tasks"] == ["a0", "a1", "a2"]
    assert meta["task_hashes"] == [task_content_hash(p) for p in train]
    evaluation = [
        _renamed(train[1], "b-copy", [0, 1, 2]),
        _task("a2", 20),  # A's id, new content
        _task("b-new", 21),
        _renamed(train[0], "b-reordered", [1, 2, 0]),
    ]
    source_b = _write_tasks(tmp_path / "b", evaluation)
    out = tmp_path / "b.json"
    printed, report = _solve(capsys, source_b, prior, out)
    assert (
        f"prior saw 2 of 4 tasks of {source_b} (left out of the score): b-copy, b-reordered\n"
        in printed
    )
    assert report["seen_by_prior"] == ["b-copy", "b-reordered"]
    assert report["scored_tasks"] == 2 and report["scored_pairs"] == 2
    assert "2 seen by the prior left out; solved " in printed
    submission = json.loads(out.read_text())
    assert sorted(submission) == ["a2", "b-copy", "b-new", "b-reordered"]
    for task_id in ("b-copy", "b-reordered"):
        assert "solved" not in report["tasks"][task_id]
        assert report["tasks"][task_id]["greedy_solves_demos"] in (True, False)
    assert {"solved", "test_inputs"} <= set(report["tasks"]["b-new"])
    # a source the prior saw all of: nothing is scored, and the summary says why
    everything_seen = _write_tasks(tmp_path / "c", [_renamed(train[2], "c", [0, 1, 2])])
    printed, report = _solve(capsys, everything_seen, prior, tmp_path / "c.json")
    assert report["seen_by_prior"] == ["c"] and report["scored_tasks"] == 0
    assert "no unseen task with known test outputs: not scored" in printed


def _content(task: Problem) -> tuple[int, int, frozenset[bytes], frozenset[bytes]]:
    """A task's numbers of pairs and test inputs, and its demonstration pairs and test inputs
    as sets of grid bytes (shape, cells): a second way to say two tasks are the same, apart
    from the hash."""

    def grid(g: np.ndarray) -> bytes:
        return bytes(g.shape) + g.tobytes()

    pairs = frozenset(
        grid(a) + grid(b) for a, b in zip(task.demo_inputs, task.demo_outputs, strict=True)
    )
    return task.num_demos, task.num_tests, pairs, frozenset(grid(g) for g in task.test_inputs)


def _listed_alike(a: Problem, b: Problem) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.demo_inputs, b.demo_inputs, strict=True))


@pytest.mark.slow  # loads two sets, solves three ARC-AGI-1 evaluation tasks (~20 s)
def test_a_prior_of_arc_agi_2_training_scores_no_arc_agi_1_evaluation_task_it_holds(
    tmp_path: Path, capsys
) -> None:
    """The tasks of ``arc-agi-1/evaluation`` a prior pretrained on ``arc-agi-2/training``
    has seen are exactly those ``arc-agi-2/training`` holds with the same content (under the
    same ids, their demonstrations in another order), and ``jaxarc solve`` scores none."""
    training = problems_from_bank(load_bank("arc-agi-2/training"))
    evaluation = problems_from_bank(load_bank("arc-agi-1/evaluation"))
    prior = tmp_path / "agi2"
    record = {"tasks": [p.task_id for p in training]}
    record["task_hashes"] = [task_content_hash(p) for p in training]
    save_prior(prior, initial_prior(TINY), TINY_PRIOR, record)
    seen = seen_by_prior(prior, evaluation)
    held = {_content(p) for p in training}
    assert seen == [p.task_id for p in evaluation if _content(p) in held]
    assert len(seen) > len(evaluation) // 2
    same_id = {p.task_id: p for p in training}
    reordered = [
        p.task_id
        for p in evaluation
        if p.task_id in seen and p.task_id in same_id and not _listed_alike(p, same_id[p.task_id])
    ]
    assert reordered  # the same tasks, their demonstrations listed in another order
    # two seen tasks and an unseen one, as ARC files with their test outputs
    picked = [p for p in evaluation if p.task_id in seen][:2]
    picked += [p for p in evaluation if p.task_id not in seen][:1]
    outputs = known_test_outputs(load_bank("arc-agi-1/evaluation"))
    source = tmp_path / "evaluation"
    for task in picked:
        truth = iter(outputs[task.task_id])  # (the test inputs' outputs, in order)
        _write_tasks(source, [task], test_output=lambda _, t=truth: next(t), exist_ok=True)
    printed, report = _solve(capsys, source, prior, tmp_path / "e.json")
    seen_ids = [p.task_id for p in picked[:2]]
    assert f"prior saw 2 of 3 tasks of {source} (left out of the score): " in printed
    assert sorted(report["seen_by_prior"]) == sorted(seen_ids)
    assert report["scored_tasks"] == 1 and set(report["tasks"]) == {p.task_id for p in picked}
    assert "solved" in report["tasks"][picked[2].task_id]
    assert not any("solved" in report["tasks"][task_id] for task_id in seen_ids)
