"""``jaxarc solve``: the search baseline, the submission format and the command's contract
(never reads a test output; bad input is one line, a non-zero exit and nothing written)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from jaxarc.cli.main import main
from jaxarc.grid import operation_ids as ops
from jaxarc.solve.candidates import WHOLE, candidate_actions, crop_boxes
from jaxarc.solve.method import Budget, BudgetError
from jaxarc.solve.problem import Problem
from jaxarc.solve.replay import replay_on_task
from jaxarc.solve.search import per_grid_table, search
from jaxarc.solve.search_method import search_attempts
from jaxarc.solve.selectors import select_boxes
from jaxarc.solve.submission import SubmissionError, score_submission, validate_submission
from jaxarc.solve.tiling import describe_tiling, find_tiling, tiling_program


def _grids(rng: np.random.Generator, count: int, shape=(3, 4)) -> list[np.ndarray]:
    return [rng.integers(0, 10, shape).astype(np.int8) for _ in range(count)]


def _problem(name: str, inputs, outputs, tests) -> Problem:
    return Problem(name, tuple(inputs), tuple(outputs), tuple(tests))


def _identity_task(rng: np.random.Generator, name: str, demos: int, shape=(3, 4)) -> Problem:
    """A task of ``demos`` random pairs whose output is the input, and one test input."""
    inputs = _grids(rng, demos, shape)
    return _problem(name, inputs, inputs, _grids(rng, 1, shape))


@pytest.mark.slow  # the module's first test: it compiles the search and the replay (~25 s)
def test_search_needs_two_actions_for_a_half_turn_and_finds_it() -> None:
    rng = np.random.default_rng(0)
    inputs, tests = _grids(rng, 3), _grids(rng, 1)
    half_turn = _problem("half", inputs, [np.rot90(g, 2) for g in inputs], tests)
    assert search(half_turn, 1).solutions == []
    attempts, info = search_attempts(half_turn, 2, Budget())
    # ROTATE twice, FLIP_LR + FLIP_TB: one node, the first solution (the content language's
    # programs come after the search's)
    assert info["solutions"][0] == ["FLIP_LR(0,0,29,29)", "FLIP_TB(0,0,29,29)"]
    assert not any(
        s[0] in ("ROTATE_CW(0,0,29,29)", "ROTATE_CCW(0,0,29,29)") for s in info["solutions"]
    )
    assert np.array_equal(attempts[0][0], np.rot90(tests[0], 2))
    assert not np.array_equal(attempts[0][1], attempts[0][0])  # a second, different attempt


def test_equivalent_sequences_are_one_node_and_no_ops_are_dropped() -> None:
    rng = np.random.default_rng(1)
    inputs = _grids(rng, 2)
    task = _problem("none", inputs, [np.zeros((2, 2), np.int8)] * 2, _grids(rng, 1))
    flips = np.asarray([(ops.FLIP_LR, *WHOLE), (ops.FLIP_TB, *WHOLE)], np.int32)
    result = search(task, 2, candidates=flips)
    # root, LR, TB, LR+TB (= TB+LR); LR+LR and TB+TB are the root again
    assert (result.sequences, result.nodes, result.solutions) == (2 + 2 * 2, 4, [])
    assert result.complete


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_finds_any_two_action_program_the_environment_runs(seed: int) -> None:
    """A task made by replaying two random candidate actions with the environment is
    solved by the search, and its solution replays to the same demonstration outputs."""
    rng = np.random.default_rng(seed)
    inputs = [rng.integers(0, 3, (int(h), int(w))).astype(np.int8) for h, w in [(4, 5), (5, 5)]]
    tests = [rng.integers(0, 3, (4, 4)).astype(np.int8)]
    blank = _problem("blank", inputs, inputs, tests)
    extra = [(ops.FLOOD_0 + 7, 1, 1, 1, 1), (ops.FILL_0 + 5, 0, 0, 1, 2)]
    table = np.concatenate([candidate_actions(blank), per_grid_table(np.asarray(extra), 3)])
    program = table[rng.choice(len(table), 2, replace=False)]
    demos_made, _ = _made(blank, program)
    task = _problem("made", inputs, demos_made, tests)
    result = search(task, 2, candidates=table)
    assert result.solutions, program
    solves, _ = replay_on_task(task, result.solutions[0])
    assert solves


def _made(problem: Problem, program: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    demo_problem = _problem("d", problem.demo_inputs, problem.demo_inputs, problem.demo_inputs)
    demo_rows = list(range(problem.num_demos)) * 2  # the demonstrations' actions, twice
    _, demos = replay_on_task(demo_problem, program[:, demo_rows] if program.ndim == 3 else program)
    _, tests = replay_on_task(problem, program)
    return demos, tests


def test_identity_is_the_empty_sequence_and_many_grids_are_replayed() -> None:
    """A task whose outputs are its inputs is solved by no action at all; a task with more
    grids than one replay call holds (15 demonstrations, 3 tests) is searched and replayed."""
    rng = np.random.default_rng(4)
    inputs, tests = _grids(rng, 15, (2, 3)), _grids(rng, 3, (2, 3))
    identity = _problem("same", inputs, inputs, tests)
    attempts, info = search_attempts(identity, 1, Budget())
    assert info["solutions"][0] == []
    assert all(np.array_equal(a, t) for (a, _), t in zip(attempts, tests, strict=True))
    flipped = _problem("flip", inputs, [np.flipud(g) for g in inputs], tests)
    attempts, info = search_attempts(flipped, 1, Budget())
    assert info["solutions"][0] == ["FLIP_TB(0,0,29,29)"]
    assert all(np.array_equal(a, np.flipud(t)) for (a, _), t in zip(attempts, tests, strict=True))


def test_a_budget_of_one_sequence_stops_the_search() -> None:
    rng = np.random.default_rng(3)
    inputs = _grids(rng, 2)
    task = _problem("t", inputs, [np.rot90(g, 2) for g in inputs], _grids(rng, 1))
    result = search(task, 2, max_sequences=1)
    assert not result.complete and result.sequences <= 1024  # one chunk at most
    assert Budget.parse("30s") == Budget(seconds=30.0)
    assert Budget.parse("5000") == Budget(steps=5000)
    for bad in ("0", "0s", "-3", "1.5", "fast"):
        with pytest.raises(BudgetError):
            Budget.parse(bad)


# ----------------------------------------------------------------- the submission format


def test_validator_accepts_the_format_and_names_each_break() -> None:
    good = {
        "a": [{"attempt_1": [[1, 2]], "attempt_2": [[0]]}],
        "b": [{"attempt_1": [[3]], "attempt_2": [[3]]}] * 2,
    }
    counts = {"a": 1, "b": 2}
    validate_submission(good, counts)
    breaks = {
        "tasks missing": {"a": good["a"]},
        "not in the source": {**good, "c": good["a"]},
        "needs a list of 2 entries": {**good, "b": good["b"][:1]},
        "exactly 'attempt_1' and 'attempt_2'": {**good, "a": [{"attempt_1": [[1]]}]},
        "not a colour 0-9": {**good, "a": [{"attempt_1": [[10]], "attempt_2": [[0]]}]},
        "ragged rows": {**good, "a": [{"attempt_1": [[1, 2], [3]], "attempt_2": [[0]]}]},
        "at most 30x30": {**good, "a": [{"attempt_1": [[0] * 31], "attempt_2": [[0]]}]},
        "non-empty list of rows": {**good, "a": [{"attempt_1": [], "attempt_2": [[0]]}]},
    }
    for message, submission in breaks.items():
        with pytest.raises(SubmissionError, match=message):
            validate_submission(submission, counts)


def test_pass_at_2_by_task_needs_every_test_input() -> None:
    sub = {
        "one": [{"attempt_1": [[0]], "attempt_2": [[1]]}],
        "two": [{"attempt_1": [[1]], "attempt_2": [[1]]}, {"attempt_1": [[2]], "attempt_2": [[3]]}],
    }
    outputs = {"one": [np.array([[1]])], "two": [np.array([[1]]), np.array([[4]])]}
    score = score_submission(sub, outputs)
    assert (score["solved_tasks"], score["scored_tasks"]) == (1, 2)
    assert (score["solved_pairs"], score["scored_pairs"]) == (2, 3)
    assert score["tasks"]["one"]["test_inputs"][0]["attempts"] == [False, True]
    unscored = score_submission(sub, {"one": [None], "two": [None, None]})
    assert unscored["scored_tasks"] == 0 and unscored["solve_rate"] is None


# ----------------------------------------------------------------- the command


def _pair(a: np.ndarray, b: np.ndarray | None) -> dict:
    pair = {"input": a.tolist()}
    if b is not None:
        pair["output"] = b.tolist()
    return pair


def _tasks(outputs: str = "true") -> dict:
    """Three small tasks: a left-right flip, a half turn, and a sort of each row, which no
    program solves.
    ``outputs``: "true", "corrupt" (wrong test outputs) or "none" (no test outputs)."""
    rng = np.random.default_rng(7)
    rules = {
        "flip": np.fliplr,
        "half": lambda g: np.rot90(g, 2),
        "hard": lambda g: np.sort(g, axis=1),
    }
    tasks = {}
    for name, rule in rules.items():
        demos, tests = _grids(rng, 2), _grids(rng, 2)  # 4 grids: the search's smallest program
        test_outputs = {
            "true": [rule(g) for g in tests],
            "corrupt": [np.full((5, 2), 9, np.int8) for _ in tests],
            "none": [None for _ in tests],
        }[outputs]
        tasks[name] = {
            "train": [_pair(g, rule(g)) for g in demos],
            "test": [_pair(g, out) for g, out in zip(tests, test_outputs, strict=True)],
        }
    return tasks


def _write_dir(root: Path, tasks: dict) -> Path:
    root.mkdir(parents=True)
    for task_id, task in tasks.items():
        (root / f"{task_id}.json").write_text(json.dumps(task))
    return root


SEARCH = ("--method", "search")


def _solve(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["solve", "--no-compile-cache", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_solve_never_reads_a_test_output(tmp_path: Path, capsys) -> None:
    """The same submission from tasks with true, corrupted and removed test outputs (a
    directory and a Kaggle challenges file); only the first scores, and it scores right."""
    runs = {}
    for kind in ("true", "corrupt"):
        source = _write_dir(tmp_path / kind, _tasks(kind))
        out = tmp_path / f"{kind}.json"
        argv = ["--source", str(source), "--method", "search", "--depth", "2", "--out", str(out)]
        code, stdout, _ = _solve(capsys, *argv)
        assert code == 0
        runs[kind] = (json.loads(out.read_text()), stdout)
    challenges = tmp_path / "challenges.json"
    challenges.write_text(json.dumps(_tasks("none")))
    out = tmp_path / "kaggle.json"
    code, stdout, _ = _solve(capsys, "--source", str(challenges), *SEARCH, "--out", str(out))
    assert code == 0 and "no test outputs known: not scored" in stdout
    assert not json.loads(out.with_suffix(".report.json").read_text())["scored_tasks"]
    runs["none"] = (json.loads(out.read_text()), stdout)
    solutions = tmp_path / "solutions.json"
    truth = _tasks("true")
    solutions.write_text(
        json.dumps({k: [p["output"] for p in task["test"]] for k, task in truth.items()})
    )
    out = tmp_path / "kaggle_scored.json"
    argv = ["--source", str(challenges), "--solutions", str(solutions), "--out", str(out)]
    code, stdout, _ = _solve(capsys, *argv, *SEARCH)
    assert code == 0 and "solved 2 of 3 tasks" in stdout
    assert json.loads(out.read_text()) == runs["none"][0]
    assert runs["true"][0] == runs["corrupt"][0] == runs["none"][0]
    assert "solved 2 of 3 tasks" in runs["true"][1]  # flip and half turn; not the recolouring
    assert "solved 0 of 3 tasks" in runs["corrupt"][1]
    validate_submission(runs["true"][0], {"flip": 2, "half": 2, "hard": 2})
    report = json.loads((tmp_path / "true.report.json").read_text())
    assert report["tasks"]["flip"]["solutions"][0] == ["FLIP_LR(0,0,29,29)"]
    assert report["tasks"]["hard"]["solved"] is False
    assert report["seconds_per_task"] > 0 and "env_steps_per_second" not in report
    assert report["method"] == "search" and report["experimental"] is False


def _bad_input(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    out = tmp_path / "out" / "submission.json"
    try:
        code, stdout, err = _solve(capsys, *argv, "--out", str(out))
    except SystemExit as exit_:  # argparse
        code, err = exit_.code, capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert not out.exists() and not out.with_suffix(".report.json").exists()


def test_bad_input_is_one_line_a_non_zero_exit_and_nothing_written(tmp_path: Path, capsys) -> None:
    tasks = _tasks()
    no_demos = _write_dir(tmp_path / "no_demos", {"t": {**tasks["flip"], "train": []}})
    _bad_input(tmp_path, capsys, ["--source", str(no_demos)], "'train' has no pairs")
    big = np.zeros((31, 31), np.int8)
    too_big = _write_dir(tmp_path / "big", {"t": {**tasks["flip"], "test": [_pair(big, None)]}})
    _bad_input(tmp_path, capsys, ["--source", str(too_big)], "grid of 31x31 is larger")
    good = _write_dir(tmp_path / "good", tasks)
    _bad_input(tmp_path, capsys, ["--source", str(good), "--budget", "0"], "must be more than 0")
    _bad_input(
        tmp_path, capsys, ["--source", str(good), "--method", "policy"], "needs --checkpoint"
    )
    _bad_input(tmp_path, capsys, ["--source", "gen/easy"], "not a generated family")
    argv = ["--source", str(good), "--method", "search", "--checkpoint", str(tmp_path)]
    _bad_input(tmp_path, capsys, argv, "applies to --method policy or test-time-rl, not search")
    argv = ["--source", str(good), "--method", "search", "--depth", "5"]
    _bad_input(tmp_path, capsys, argv, "--depth 5: use 1 to 4")
    argv = ["--source", str(good), "--method", "random", "--tasks-at-once", "2"]
    _bad_input(tmp_path, capsys, argv, "--tasks-at-once applies to --method test-time-rl")


@pytest.mark.slow
def test_policy_method_plays_a_checkpoint_and_refuses_another_action_format(
    tmp_path: Path, capsys
) -> None:
    """A (tiny, untrained) checkpoint plays every test input twice into a valid submission,
    the same with corrupted test outputs; the same weights under a config of another action
    format are refused in one line."""
    import jax

    from jaxarc.agents import GRPOConfig, TrainConfig, make_train
    from jaxarc.agents.model.policy import PolicyConfig
    from jaxarc.agents.run.checkpoint import save_checkpoint

    source = _write_dir(tmp_path / "tasks", _tasks())
    config = TrainConfig(
        source=str(source),
        canvas=30,
        selection_format="point",
        batch_tasks=2,
        group_size=2,
        max_episode_steps=2,
        num_updates=1,
        eval_tasks=2,
        grpo=GRPOConfig(epochs=1, minibatches=1),
        policy=PolicyConfig(
            channels=4, trunk_layers=1, pair_channels=4, context_size=8, head_hidden=8
        ),
    )
    init, _ = make_train(config)
    checkpoint = save_checkpoint(
        tmp_path / "run" / "checkpoints", 0, init(jax.random.key(0)), config
    )
    out = tmp_path / "policy.json"
    argv = ["--source", str(source), "--method", "policy", "--checkpoint", str(tmp_path / "run")]
    code, stdout, _ = _solve(capsys, *argv, "--out", str(out), "--batch-size", "4")
    assert code == 0 and "3 tasks, policy" in stdout
    submission = json.loads(out.read_text())
    validate_submission(submission, {"flip": 2, "half": 2, "hard": 2})
    corrupt = _write_dir(tmp_path / "corrupt", _tasks("corrupt"))  # the policy never peeks
    argv_corrupt = [*argv, "--out", str(tmp_path / "corrupt.json"), "--batch-size", "4"]
    argv_corrupt[1] = str(corrupt)
    assert _solve(capsys, *argv_corrupt)[0] == 0
    assert json.loads((tmp_path / "corrupt.json").read_text()) == submission
    saved = json.loads((checkpoint / "config.json").read_text())
    (checkpoint / "config.json").write_text(json.dumps({**saved, "selection_format": "bbox"}))
    _bad_input(tmp_path, capsys, argv, "cannot load")


def _tiny_train_config(source: str, **overrides):
    """A tiny policy's training configuration (flood and submit, point actions, 30x30)."""
    from jaxarc.agents import GRPOConfig, TrainConfig
    from jaxarc.agents.grpo.config import FLOOD_AND_SUBMIT
    from jaxarc.agents.model.policy import PolicyConfig

    return TrainConfig(
        source=source,
        canvas=30,
        selection_format="point",
        allowed_operations=FLOOD_AND_SUBMIT,
        batch_tasks=2,
        group_size=2,
        max_episode_steps=2,
        num_updates=1,
        eval_tasks=2,
        grpo=GRPOConfig(advantage="process", epochs=1, minibatches=1, beta=0.0),
        policy=PolicyConfig(
            channels=4, trunk_layers=1, pair_channels=4, context_size=8, head_hidden=8
        ),
        **overrides,
    )


def _fill_tasks(kind: str = "true") -> dict:
    """Two tasks a tiny untrained policy fails and a few test-time updates teach: every grid
    is one colour, and the output is the same grid in the task's colour (3, then 6): one
    FLOOD of that colour, then SUBMIT. ``kind``: "true" or "corrupt" test outputs."""
    tasks = {}
    for name, colour in (("fill3", 3), ("fill6", 6)):
        shapes = [(3, 4), (2, 5), (4, 4), (3, 3)]
        inputs = [np.full(s, c, np.int8) for s, c in zip(shapes, (1, 2, 5, 7), strict=True)]
        outputs = [np.full(g.shape, colour, np.int8) for g in inputs]
        if kind == "corrupt":
            outputs[-1] = np.zeros((1, 1), np.int8)
        tasks[name] = {
            "train": [_pair(a, b) for a, b in zip(inputs[:3], outputs[:3], strict=True)],
            "test": [_pair(inputs[3], outputs[3])],
        }
    return tasks


@pytest.mark.long  # test-time-rl, an experimental method
@pytest.mark.slow
def test_test_time_rl_learns_each_task_from_its_demonstrations_and_never_peeks(
    tmp_path: Path, capsys
) -> None:
    """A tiny untrained checkpoint does not solve both tasks frozen; ``--method test-time-rl``
    learns each from its demonstrations (a copy per task: the two need different colours)
    and solves both, with the same submission when the test outputs are corrupted; a
    budget below one update is refused in one line."""
    import jax

    from jaxarc.agents import make_train
    from jaxarc.agents.run.checkpoint import save_checkpoint
    from jaxarc.agents.run.evaluate import load_trained_policy
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.policy_finetune import TestTimeConfig, attempts_after_test_time_rl
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank
    from jaxarc.solve.submission import entries

    source = _write_dir(tmp_path / "tasks", _fill_tasks())
    config = _tiny_train_config(
        str(source), failed_submit_penalty=0.0, similarity_weight=1.0, lr=3e-3
    )
    init, _ = make_train(config)
    save_checkpoint(tmp_path / "run" / "checkpoints", 0, init(jax.random.key(0)), config)
    trained, policy, _ = load_trained_policy(tmp_path / "run")
    bank = load_bank(str(source))
    problems = problems_from_bank(bank)
    frozen, frozen_infos = attempts_after_test_time_rl(
        policy, trained, problems, TestTimeConfig(updates=0), key=jax.random.key(0)
    )
    frozen_score = score_submission(
        {t: entries(a) for t, a in frozen.items()}, known_test_outputs(bank)
    )
    assert frozen_score["solved_tasks"] < 2  # (an untrained argmax may hit one colour)
    # the greedy play of the demonstrations (leave-one-out) tells the same
    assert min(frozen_infos[t]["demos_solved"] for t in ("fill3", "fill6")) < 1.0
    # a learning temperature is the learning rollouts' alone: the attempts play at 1
    hot, _ = attempts_after_test_time_rl(
        policy, trained, problems, TestTimeConfig(updates=0, temperature=3.0), key=jax.random.key(0)
    )
    for task, made in frozen.items():
        for (greedy, sampled), (hot_greedy, hot_sampled) in zip(made, hot[task], strict=True):
            np.testing.assert_array_equal(hot_greedy, greedy)
            np.testing.assert_array_equal(hot_sampled, sampled)

    argv = ["--method", "test-time-rl", "--checkpoint", str(tmp_path / "run"), "--seed", "1"]
    out = tmp_path / "ttrl.json"
    code, stdout, _ = _solve(capsys, "--source", str(source), *argv, "--out", str(out))
    assert code == 0 and "solved 2 of 2 tasks" in stdout, stdout
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["test_time_updates"] == TestTimeConfig().updates
    assert report["method"] == "test-time-rl" and report["experimental"] is True
    # its speed: making programs apart, then seconds a task and env steps/s without it
    assert 0 < report["compile_seconds"] < report["wall_seconds"]
    assert f"({report['compile_seconds']} s making programs)" in stdout
    running = report["wall_seconds"] - report["compile_seconds"]
    assert report["seconds_per_task"] == pytest.approx(running / 2, abs=0.06)
    learned_steps = 2 * report["env_steps_per_task"]
    assert report["env_steps_per_second"] == pytest.approx(learned_steps / running, rel=0.2)
    assert all(report["tasks"][t]["train_success"] > 0.5 for t in ("fill3", "fill6"))
    assert all(report["tasks"][t]["demos_solved"] == 1.0 for t in ("fill3", "fill6")), report
    corrupt = _write_dir(tmp_path / "corrupt", _fill_tasks("corrupt"))
    out_corrupt = tmp_path / "corrupt.json"
    code, stdout, _ = _solve(capsys, "--source", str(corrupt), *argv, "--out", str(out_corrupt))
    assert code == 0 and "solved 0 of 2 tasks" in stdout
    assert json.loads(out_corrupt.read_text()) == json.loads(out.read_text())
    _bad_input(tmp_path, capsys, ["--source", str(source), *argv, "--budget", "7"], "at least that")


def test_each_problem_plays_on_the_smallest_canvas_that_holds_its_grids() -> None:
    """Demonstration inputs and outputs and test inputs all count, the largest side wins."""
    from jaxarc.solve.policy_finetune import canvas_side

    rng = np.random.default_rng(3)
    cases = [  # demo input, demo output, test input -> canvas side
        ((3, 4), (3, 4), (2, 2), 10),
        ((3, 4), (12, 3), (2, 2), 15),
        ((10, 10), (1, 1), (10, 10), 10),
        ((3, 3), (3, 3), (16, 1), 20),
        ((3, 3), (3, 3), (30, 1), 30),
    ]
    for demo, output, test, side in cases:
        grids = (_grids(rng, 1, shape) for shape in (demo, output, test))
        assert canvas_side(_problem("t", *grids)) == side


def test_tasks_learn_in_banks_of_one_canvas_and_a_similar_number_of_demonstrations() -> None:
    """A bank pads every task to its largest number of pairs, so a task with many does not
    share a bank with tasks of few: classes up to 3, 4, 6, 10 pairs, then each count alone;
    the canvas splits them too, and each bank keeps its tasks' order."""
    from jaxarc.solve.policy_finetune import bank_groups, demo_count

    rng = np.random.default_rng(4)
    task = functools.partial(_identity_task, rng)

    counts = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
    classes = [demo_count(task("t", n)) for n in counts]
    assert classes == [3, 3, 3, 4, 6, 6, 10, 10, 11, 12]
    problems = [
        task("a2", 2),
        task("b6", 6),
        task("c3", 3),
        task("d11", 11),
        task("e5", 5),
        task("f4", 4),
        task("g3-big", 3, (12, 12)),
        task("h7", 7),
        task("i12", 12),
    ]
    groups = [(side, [p.task_id for p in members]) for side, members in bank_groups(problems)]
    assert groups == [
        (10, ["a2", "c3"]),
        (10, ["f4"]),
        (10, ["b6", "e5"]),
        (10, ["h7"]),
        (10, ["d11"]),
        (10, ["i12"]),
        (15, ["g3-big"]),
    ]


@pytest.mark.long  # test-time-rl, an experimental method
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="counts Linux memory mappings")
def test_test_time_rl_holds_one_bank_s_programs_at_a_time() -> None:
    """Compiled programs hold thousands of memory mappings, and a process may hold about
    65,000: a run of many banks (the ARC-AGI-1 evaluation set has 14) must free each bank's
    programs before the next, or its last banks fail to compile. Without that, a bank of
    this tiny policy adds some 3,700 mappings."""
    import jax

    from jaxarc.agents import make_train
    from jaxarc.solve.policy_finetune import (
        TestTimeConfig,
        attempts_after_test_time_rl,
        bank_groups,
    )

    config = _tiny_train_config("gen/easy")
    init, _ = make_train(config)
    policy = init(jax.random.key(0)).policy
    rng = np.random.default_rng(5)
    problems = [_identity_task(rng, "three", 3), _identity_task(rng, "four", 4)]
    assert len(bank_groups(problems)) == 2
    counts = []  # the mappings at each bank's start and at the end

    def progress(_done: int, _total: int) -> None:
        with open("/proc/self/maps") as maps:
            counts.append(sum(1 for _ in maps))

    attempts, _ = attempts_after_test_time_rl(
        policy,
        config,
        problems,
        TestTimeConfig(updates=1),
        key=jax.random.key(0),
        progress=progress,
    )
    assert set(attempts) == {"three", "four"} and len(counts) == 3
    # the second bank starts after the first one's programs were freed, and frees its own
    assert counts[2] - counts[1] < 1_000, counts


def test_test_time_config_sets_the_learning_run_and_refuses_nonsense() -> None:
    """Every setting reaches the training configuration it makes (``None`` keeps the
    checkpoint's), and each bad value is refused by name."""
    from jaxarc.agents import GRPOConfig, TrainConfig
    from jaxarc.solve.policy_finetune import TestTimeConfig

    trained = TrainConfig(
        max_episode_steps=4, lr=1e-3, grpo=GRPOConfig(entropy_coef=0.01, epochs=2)
    )
    kept = TestTimeConfig(updates=3).train_config(trained, canvas=15)
    assert (kept.canvas, kept.max_episode_steps, kept.lr) == (15, 4, 1e-3)
    assert (kept.bc_updates, kept.grpo.epochs, kept.grpo.entropy_coef) == (0, 1, 0.01)
    assert kept.episode_mode == "train" and kept.num_updates == 3
    tt = TestTimeConfig(
        updates=2, batch_tasks=3, group_size=4, lr=0.1, entropy_coef=0.2, max_episode_steps=6
    )
    changed = tt.train_config(trained, canvas=10)
    assert (changed.max_episode_steps, changed.lr, changed.grpo.entropy_coef) == (6, 0.1, 0.2)
    assert (changed.batch_tasks, changed.group_size) == (3, 4)
    assert tt.env_steps_per_task(6) == 2 * 3 * 4 * 6
    assert (tt.episode_steps(trained), TestTimeConfig().episode_steps(trained)) == (6, 4)
    for bad, name in (
        ({"temperature": 0.0}, "temperature"),
        ({"max_episode_steps": 0}, "max_episode_steps"),
        ({"group_size": 1}, "group_size"),
        ({"updates": -1}, "updates"),
    ):
        with pytest.raises(ValueError, match=name):
            TestTimeConfig(**bad)


# ----------------------------------------------------------------- crops by content


def test_selectors_find_content_colours_frames_and_unique_objects() -> None:
    grid = np.zeros((7, 9), np.int8)
    grid[1:6, 1:6] = 2  # a frame of colour 2 ...
    grid[2:5, 2:5] = 0
    grid[3, 3] = 4  # ... around one cell of colour 4
    grid[6, 7:9] = 3  # a bar of two cells, apart from the frame
    boxes = select_boxes(grid)
    assert boxes["content"] == (1, 1, 6, 8)
    assert boxes["colour 3"] == (6, 7, 6, 8)
    assert boxes["colour 7"] is None
    assert boxes["inside colour 2"] == (2, 2, 4, 4)
    assert boxes["inside colour 3"] is None  # too thin to have an inside
    assert boxes["largest object"] == (1, 1, 5, 5)  # the frame: 16 cells
    assert boxes["smallest object"] == (3, 3, 3, 3)
    assert boxes["largest shape"] == (1, 1, 5, 5)
    grid[0, 0] = 5  # a second one-cell object: no unique smallest object
    assert select_boxes(grid)["smallest object"] is None


def _with_object(rng: np.random.Generator, shape, obj: np.ndarray) -> np.ndarray:
    """A grid of one-cell specks of colour 1 with ``obj`` placed at a random corner."""
    grid = np.zeros(shape, np.int8)
    grid[rng.random(shape) < 0.08] = 1
    r = int(rng.integers(0, shape[0] - obj.shape[0] + 1))
    c = int(rng.integers(0, shape[1] - obj.shape[1] + 1))
    grid[max(r - 1, 0) : r + obj.shape[0] + 1, max(c - 1, 0) : c + obj.shape[1] + 1] = 0
    grid[r : r + obj.shape[0], c : c + obj.shape[1]] = obj
    return grid


def test_search_crops_each_grid_to_its_largest_object_with_environment_actions() -> None:
    """The object to crop sits at a different place and has a different shape in every
    grid: no fixed box is one program for the task, the content's crop candidates are."""
    rng = np.random.default_rng(5)
    objects = [np.full(shape, colour, np.int8) for shape, colour in [((3, 4), 6), ((2, 5), 7)]]
    objects += [np.full((4, 3), 8, np.int8), np.full((3, 3), 9, np.int8)]
    grids = [_with_object(rng, (9, 10), obj) for obj in objects]
    task = _problem("crop", grids[:3], objects[:3], grids[3:])
    assert [name for name, _ in crop_boxes(task)] == ["largest object"]  # "shape": same boxes
    attempts, info = search_attempts(task, 3, Budget())
    assert np.array_equal(attempts[0][0], objects[3])
    assert info["solutions"][0] == [
        "COPY(largest object)",
        "RESIZE(shape of largest object)",
        "PASTE(0,0,0,0)",
    ]


def test_a_tiling_of_turned_copies_is_solved_tile_by_tile_with_environment_actions() -> None:
    """A 2x2 tiling of the input and its turns (9 actions, beyond the breadth-first search)
    on grids of different sizes: each tile's symmetry is found, the program replays on the
    demonstrations and predicts the test's tiling; a tiling no symmetry makes is refused."""
    rng = np.random.default_rng(6)
    inputs = [rng.integers(0, 4, (s, s)).astype(np.int8) for s in (3, 4, 2, 5)]

    def tiled(g: np.ndarray) -> np.ndarray:
        return np.block([[g, np.rot90(g, -1)], [np.rot90(g, 1), np.rot90(g, 2)]])

    task = _problem("tiles", inputs[:3], [tiled(g) for g in inputs[:3]], inputs[3:])
    tiling = find_tiling(task)
    assert tiling is not None and tiling.symmetries == (
        ("identity", "turn clockwise"),
        ("turn anticlockwise", "half turn"),
    )
    program = tiling_program(tiling)
    assert program is not None and program.shape == (9, 4, 5)
    solves, predictions = replay_on_task(task, program)
    assert solves and np.array_equal(predictions[0], tiled(inputs[3]))
    attempts, info = search_attempts(task, 1, Budget())
    assert np.array_equal(attempts[0][0], tiled(inputs[3]))
    assert info["solutions"][0] == [
        "COPY(input)",
        "RESIZE(2x2 tiles)",
        "PASTE(tile 0,1)",
        "ROTATE_CW(tile 0,1)",
        "PASTE(tile 1,0)",
        "ROTATE_CCW(tile 1,0)",
        "PASTE(tile 1,1)",
        "FLIP_LR(tile 1,1)",
        "FLIP_TB(tile 1,1)",
    ]
    noise = [np.block([[g, rng.integers(0, 4, g.shape).astype(np.int8)]]) for g in inputs[:3]]
    assert find_tiling(_problem("noise", inputs[:3], noise, inputs[3:])) is None


def test_arc_split_writes_the_training_tasks_after_the_tuning_split_and_refuses_evaluation(
    tmp_path: Path, capsys
) -> None:
    """``benchmarks/arc_split.py`` (docs/training.md, pretraining on ARC): the tasks after
    the first ``--skip``, that fit ``--max-side``, as a directory the loader reads back with
    the same pairs; an evaluation source is refused."""
    import runpy

    from jaxarc.data.loading import load_bank
    from jaxarc.solve.problem import known_test_outputs, problems_from_bank

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "arc_split.py"
    main_of = runpy.run_path(str(script))["main"]
    out = tmp_path / "split"
    assert main_of(["--skip", "390", "--max-side", "12", "--out", str(out)]) == 0
    training = load_bank("arc-agi-1/training")
    tests = known_test_outputs(training)

    def fits(p: Problem) -> bool:
        grids = (*p.demo_inputs, *p.demo_outputs, *p.test_inputs, *tests[p.task_id])
        return max(max(g.shape) for g in grids) <= 12

    kept = {p.task_id: p for p in problems_from_bank(training)[390:] if fits(p)}
    written = load_bank(str(out))
    assert sorted(written.task_ids) == sorted(kept)
    outputs = known_test_outputs(written)
    for problem in problems_from_bank(written):
        original = kept[problem.task_id]
        assert all(
            np.array_equal(a, b)
            for a, b in zip(problem.demo_outputs, original.demo_outputs, strict=True)
        )
        assert len(outputs[problem.task_id]) == original.num_tests
    with pytest.raises(SystemExit):
        main_of(["--source", "arc-agi-1/evaluation", "--out", str(tmp_path / "no")])
    assert "evaluation tasks are for the final score only" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_a_tiling_of_a_content_crop_pastes_every_tile_from_each_grid_s_own_box() -> None:
    """Outputs that tile the box of a grid's non-zero cells (itself, then mirrored) where
    that box moves and changes size from grid to grid: the source is found by its selector
    and every tile, the first included, is pasted from each grid's own box."""
    rng = np.random.default_rng(7)
    shapes, places = [(2, 3), (3, 2), (2, 2), (3, 3)], [(1, 4), (5, 0), (3, 3), (0, 6)]
    inputs, outputs = [], []
    for (h, w), (r, c) in zip(shapes, places, strict=True):
        patch = rng.integers(1, 5, (h, w)).astype(np.int8)
        grid = np.zeros((9, 10), np.int8)
        grid[r : r + h, c : c + w] = patch
        inputs.append(grid)
        outputs.append(np.hstack([patch, np.fliplr(patch)]))
    task = _problem("crop-tiles", inputs[:3], outputs[:3], inputs[3:])
    tiling = find_tiling(task)
    assert tiling is not None and tiling.source == "content"
    assert tiling.symmetries == (("identity", "mirror left-right"),)
    assert describe_tiling(tiling) == [
        "COPY(content)",
        "RESIZE(1x2 tiles)",
        "PASTE(tile 0,0)",
        "PASTE(tile 0,1)",
        "FLIP_LR(tile 0,1)",
    ]
    solves, predictions = replay_on_task(task, tiling_program(tiling))
    assert solves and np.array_equal(predictions[0], outputs[3])
