"""Program policies learned from reward per task (``jaxarc.solve.program_rl``), the prior
over action kinds pretrained across tasks (``jaxarc.solve.program_prior``), and their
commands (``jaxarc solve --method program-rl``, ``jaxarc pretrain-programs``)."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.cli.main import main
from jaxarc.grid import operation_ids as ops
from jaxarc.solve.attempts import pick_attempts
from jaxarc.solve.candidates import WHOLE
from jaxarc.solve.prior_store import PRIOR_FILE, PRIOR_INFO, load_prior, save_prior
from jaxarc.solve.problem import Problem, problems_from_bank, task_content_hash
from jaxarc.solve.program_attempts import _ranked_predictions, program_rl_attempts
from jaxarc.solve.program_prior import PriorConfig, PriorError, initial_prior, train_prior
from jaxarc.solve.program_rl import (
    ProgramRLConfig,
    ProgramRLError,
    grpo_step,
    learn_program,
    sample_programs,
    uniform_logits,
)
from jaxarc.solve.program_tasks import (
    BOX_CLASSES,
    NOOP,
    action_kinds,
    program_vocabulary,
    task_arrays,
)
from jaxarc.solve.program_variant import LearnerVariant, VariantError
from jaxarc.solve.replay import replay_on_task
from jaxarc.solve.tiling import tile_layout_actions

SMALL = ProgramRLConfig(updates=40, group_size=32, program_length=4)
PER_STEP = LearnerVariant(policy="per-step")
STORED_PRIORS = Path(__file__).parent.parent / "benchmarks/results/solve"


def _grids(rng: np.random.Generator, count: int, shape=(4, 4)) -> list[np.ndarray]:
    return [rng.integers(0, 10, shape).astype(np.int8) for _ in range(count)]


def _task(name: str, rule, seed: int, demos: int = 3, shape=(4, 4)) -> Problem:
    rng = np.random.default_rng(seed)
    inputs = _grids(rng, demos, shape)
    return Problem(
        name, tuple(inputs), tuple(rule(g) for g in inputs), tuple(_grids(rng, 1, shape))
    )


def _mirror_tiling(grid: np.ndarray) -> np.ndarray:
    top = np.concatenate([grid, np.fliplr(grid)], axis=1)
    return np.concatenate([top, np.flipud(top)], axis=0)


def test_the_vocabulary_starts_with_the_no_op_and_lays_a_tiling_out_tile_by_tile() -> None:
    rng = np.random.default_rng(0)
    inputs = [*_grids(rng, 2, (3, 3)), *_grids(rng, 1, (2, 2))]  # two tile sizes
    tests = _grids(rng, 1, (3, 3))
    task = Problem("tiles", tuple(inputs), tuple(_mirror_tiling(g) for g in inputs), tuple(tests))
    vocabulary = program_vocabulary(task)
    assert (vocabulary[0] == np.asarray(NOOP)).all()
    layout = tile_layout_actions(task)
    # RESIZE, COPY of the first tile, per tile a PASTE and 4 actions on its box (square
    # tiles: flips and turns)
    assert layout.shape == (2 + 4 * (1 + 4), 4, 5)
    resize, copy_tile = layout[0], layout[1]
    assert resize[:, 0].tolist() == [ops.RESIZE] * 4
    assert resize[:, 3:].tolist() == [[5, 5], [5, 5], [3, 3], [5, 5]]  # each grid's own size
    assert copy_tile[:, 0].tolist() == [ops.COPY] * 4
    assert copy_tile[:, 3:].tolist() == [[2, 2], [2, 2], [1, 1], [2, 2]]  # each grid's tile
    rows = {
        (int(r[0, 0]), *(int(v) for v in r[0, 1:])): r for r in layout
    }  # keyed by the first grid's action
    program = [np.asarray([(ops.COPY, *WHOLE)] * 4, np.int32), resize]
    for op, box in [
        (ops.PASTE, (0, 3, 0, 3)),
        (ops.FLIP_LR, (0, 3, 2, 5)),
        (ops.PASTE, (3, 0, 3, 0)),
        (ops.FLIP_TB, (3, 0, 5, 2)),
        (ops.PASTE, (3, 3, 3, 3)),
        (ops.FLIP_LR, (3, 3, 5, 5)),
        (ops.FLIP_TB, (3, 3, 5, 5)),
    ]:
        program.append(rows[(op, *box)])
    solves, made = replay_on_task(task, np.stack(program))
    assert solves and np.array_equal(made[0], _mirror_tiling(tests[0]))
    # the same tiling with the first tile copied after the RESIZE (it holds the input)
    after = [resize, copy_tile, *program[2:]]
    solves, made = replay_on_task(task, np.stack(after))
    assert solves and np.array_equal(made[0], _mirror_tiling(tests[0]))
    assert all(any((v == row).all() for v in vocabulary) for row in layout)
    no_tiling = _task("flip", np.fliplr, 1)
    assert tile_layout_actions(no_tiling).shape == (0, 4, 5)


def test_the_tile_layout_also_tiles_a_box_the_content_selects() -> None:
    rng = np.random.default_rng(5)

    def placed(corner: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        block = rng.integers(1, 10, (2, 3)).astype(np.int8)
        grid = np.zeros((6, 7), np.int8)
        grid[corner[0] : corner[0] + 2, corner[1] : corner[1] + 3] = block
        return grid, np.hstack([block, np.fliplr(block)])  # the block, then its mirror

    (a, a_out), (b, b_out), (test, test_out) = (placed(c) for c in [(0, 1), (3, 4), (2, 2)])
    task = Problem("crop tiles", (a, b), (a_out, b_out), (test,))
    rows = {tuple(r.reshape(-1).tolist()) for r in tile_layout_actions(task)}
    boxes = [(0, 1, 1, 3), (3, 4, 4, 6), (2, 2, 3, 4)]  # the content's box in each grid
    program = [
        [(ops.COPY, *box) for box in boxes],
        [(ops.RESIZE, 0, 0, 1, 5)] * 3,
        [(ops.PASTE, 0, 0, 0, 0)] * 3,
        [(ops.PASTE, 0, 3, 0, 3)] * 3,
        [(ops.FLIP_LR, 0, 3, 1, 5)] * 3,
    ]
    for step in program:  # every step is one row of the layout
        assert tuple(np.asarray(step).reshape(-1).tolist()) in rows
    solves, made = replay_on_task(task, np.asarray(program, np.int32))
    assert solves and np.array_equal(made[0], test_out)


def test_action_kinds_name_the_operation_and_the_class_of_its_box() -> None:
    table = np.asarray(
        [[NOOP], [(ops.FLIP_LR, *WHOLE)], [(ops.PASTE, 0, 0, 0, 0)], [(ops.PASTE, 0, 3, 0, 3)]],
        np.int32,
    )
    table = np.concatenate([table, np.asarray([[(ops.FLIP_TB, 0, 3, 2, 5)]], np.int32)])
    kinds = action_kinds(table)
    expected = [0, (ops.FLIP_LR + 1) * BOX_CLASSES + 1, (ops.PASTE + 1) * BOX_CLASSES + 2]
    expected += [(ops.PASTE + 1) * BOX_CLASSES + 3, (ops.FLIP_TB + 1) * BOX_CLASSES + 4]
    assert kinds.tolist() == expected


@pytest.mark.slow  # compiles the learner (~10 s)
def test_a_program_policy_learns_a_flip_from_reward_alone_and_compiles_once_per_shape(
    count_compilations,
) -> None:
    flip = _task("flip", np.flipud, 2)
    attempts, info = program_rl_attempts(flip, SMALL, jax.random.key(0))
    assert info["greedy_solves_demos"] and info["greedy_program"] == ["FLIP_TB(0,0,29,29)"]
    assert info["first_solved_update"] >= 0
    assert np.array_equal(attempts[0][0], np.flipud(flip.test_inputs[0]))
    untrained = dataclasses.replace(SMALL, updates=0)
    _, frozen = program_rl_attempts(flip, untrained, jax.random.key(0))
    assert not frozen["greedy_solves_demos"]  # the uniform start plays the no-op first
    turn = _task("turn", lambda g: np.rot90(g, 2), 3)  # same canvas, pairs, vocabulary size
    jax.random.fold_in(jax.random.key(2), 1)  # (a restart's key: a small program of its own)
    with count_compilations() as clock:
        learned, _, _ = learn_program(turn, SMALL, jax.random.key(1))
        twice_attempts, twice = program_rl_attempts(
            turn, SMALL, jax.random.key(2), variant=LearnerVariant(restarts=2)
        )
    assert clock.programs == 0  # the learner of this shape is compiled already
    assert twice["restarts_solving"] == 2  # each restart learns the half turn by itself
    assert np.array_equal(twice_attempts[0][0], np.rot90(turn.test_inputs[0], 2))
    assert np.isfinite(np.asarray(learned.mean_reward)).all()
    assert learned.mean_reward.shape == (SMALL.updates,)


def _row(table: np.ndarray, op: int, box=WHOLE) -> int:
    """The vocabulary row of ``op`` on ``box`` (as the first grid has it)."""
    return int(np.flatnonzero((table[:, 0] == np.asarray((op, *box))).all(axis=1))[0])


def test_a_program_counts_as_stopped_at_its_best_step_and_exploring_starts_are_uniform() -> None:
    flip = _task("flip", np.flipud, 4)
    arrays, table, side = task_arrays(flip)
    row = _row(table, ops.FLIP_TB)
    config = dataclasses.replace(SMALL, group_size=16, exploring_starts=8)
    logits = uniform_logits(arrays.valid, config).at[0].set(-1e9).at[0, row].set(0.0)
    memory = np.asarray([row, row, 0, 0], np.int32)  # solves after one step, undoes it after two
    _, kept, kept_reward, kept_solved, reward, solved = grpo_step(
        lambda p: p, logits, arrays, jax.random.key(0), config, side, memory
    )
    assert kept[-1].tolist() == [row, 0, 0, 0] and bool(kept_solved[-1])
    assert not bool(solved[-1]) and float(kept_reward[-1]) > float(reward[-1]) + 0.5
    programs, _, chosen = sample_programs(logits, arrays.valid, jax.random.key(1), config)
    first = np.asarray(programs[:, 0])
    # the policy's own starts are the flip; the exploring ones are drawn from every action
    # and, not being the policy's choice, are not credited to it
    assert (first[8:] == row).all() and len(set(first[:8].tolist())) > 4
    assert (first[:8] != 0).all() and not np.asarray(chosen[:8, 0]).any()
    assert np.asarray(chosen[8:, 0]).all()
    off = LearnerVariant(hindsight_stop=False)
    key = jax.random.key(0)
    _, kept_off, *_ = grpo_step(lambda p: p, logits, arrays, key, config, side, memory, off)
    assert kept_off[-1].tolist() == memory.tolist()


def _cut(chosen: np.ndarray) -> int:
    """The step an exploring program drew uniformly: the last of its leading unchosen ones."""
    return int(np.argmax(chosen)) - 1 if chosen.any() else len(chosen) - 1


def test_exploring_programs_replay_a_prefix_of_the_memory_then_draw_one_action_uniformly() -> None:
    flip = _task("flip", np.flipud, 4)
    arrays, table, side = task_arrays(flip)
    tb, lr = _row(table, ops.FLIP_TB), _row(table, ops.FLIP_LR)
    config = dataclasses.replace(SMALL, group_size=64, exploring_starts=48, program_length=6)
    logits = uniform_logits(arrays.valid, config).at[0].set(-1e9).at[0, tb].set(0.0)
    memory = jnp.asarray([lr, lr, lr, 0, 0, 0], jnp.int32)  # three actions, then the stop
    programs, _, chosen = sample_programs(logits, arrays.valid, jax.random.key(2), config, memory)
    programs, chosen = np.asarray(programs), np.asarray(chosen)
    cuts = [_cut(chosen[i]) for i in range(48)]
    assert set(cuts) == {0, 1, 2, 3}  # every prefix of the memory, the empty one included
    for i, cut in enumerate(cuts):
        assert (programs[i, :cut] == lr).all() and programs[i, cut] != 0
        assert not chosen[i, : cut + 1].any()  # replayed and uniform steps are not credited
    assert (programs[48:, 0] == tb).all() and chosen[48:, 0].all()  # the policy's own
    full = jnp.full(6, lr, jnp.int32)  # a memory as long as a program: the last step is
    programs, _, chosen = sample_programs(logits, arrays.valid, jax.random.key(3), config, full)
    assert max(_cut(np.asarray(chosen[i])) for i in range(48)) == 5  # left to explore
    start_only = LearnerVariant(explore_from_memory=False)
    key = jax.random.key(2)
    _, _, chosen = sample_programs(logits, arrays.valid, key, config, memory, start_only)
    assert not np.asarray(chosen[:48, 0]).any() and np.asarray(chosen[:48, 1]).all()


def test_restarts_vote_for_the_test_prediction_most_of_them_solve_the_demonstrations_with() -> None:
    flip = _task("flip", np.flipud, 4)
    a, b, c = ([np.full((2, 2), k, np.int8)] for k in (1, 2, 3))
    # greedy and best of three restarts: B solves in restarts 1 and 2, A only in restart 0
    played = [(True, a), (False, c), (True, b), (True, b), (False, c), (True, b)]
    ranked, flags = _ranked_predictions(played, flip)
    assert [int(p[0][0, 0]) for p in ranked[:4]] == [2, 2, 2, 1]
    attempts, from_solutions = pick_attempts(ranked, flags)
    assert [int(g[0, 0]) for g in attempts[0]] == [2, 1] and from_solutions == [True, True]
    # no solving program: the order played, then the test input; no attempt from a solution
    unsolved = [(False, c), (False, a)]
    ranked, flags = _ranked_predictions(unsolved, flip)
    assert [int(p[0][0, 0]) for p in ranked[:2]] == [3, 1]
    assert np.array_equal(ranked[-1][0], flip.test_inputs[0])
    assert pick_attempts(ranked, flags)[1] == [False, False]


def test_program_rl_settings_refuse_nonsense() -> None:
    for change, message in [
        ({"group_size": 1}, "GRPO compares at least 2"),
        ({"program_length": 40}, "at most 32"),
        ({"updates": -1}, "at least 0"),
        ({"noop_prior": 1.0}, "in [0, 1)"),
        ({"learning_rate": 0.0}, "must be more than 0"),
        ({"exploring_starts": 65}, "at most group_size=64"),
    ]:
        with pytest.raises(ProgramRLError, match=re.escape(message)):
            ProgramRLConfig(**change)
    for change, message in [
        ({"credit": "every"}, "'step' or 'program'"),
        ({"policy": "net"}, "'chain' or 'per-step'"),
        ({"restarts": 0}, "restarts=0: at least 1"),
    ]:
        with pytest.raises(VariantError, match=re.escape(message)):
            LearnerVariant(**change)
    # the ablation switches are not settings of the public learner
    for switch in ("credit", "policy", "memory", "hindsight_stop", "restarts"):
        assert switch not in {f.name for f in dataclasses.fields(ProgramRLConfig)}
    flip = _task("flip", np.flipud, 2)
    with pytest.raises(ProgramRLError, match="needs a chain policy"):
        learn_program(flip, SMALL, jax.random.key(0), initial_prior(SMALL), PER_STEP)


def test_a_saved_prior_loads_as_it_was_and_a_broken_one_is_named(tmp_path: Path) -> None:
    config = PriorConfig(rounds=1, program=SMALL)
    prior = initial_prior(SMALL) + np.random.default_rng(0).normal(size=(1, 1)).astype(np.float32)
    run = tmp_path / "run"
    save_prior(run, prior, config, {"tasks": ["a"]})
    good_npz, good_json = (run / "prior.npz").read_bytes(), (run / "prior.json").read_text()
    loaded, loaded_config = load_prior(run)
    assert np.array_equal(loaded, prior) and loaded_config == config
    damaged = [
        (good_npz[:100], "prior.npz: damaged, not a readable program prior (BadZipFile"),
        (b"", "prior.npz: damaged, not a readable program prior (EOFError"),
    ]
    for content, message in damaged:  # a cut download, an empty file
        (run / "prior.npz").write_bytes(content)
        with pytest.raises(PriorError, match=re.escape(message)):
            load_prior(run)
    np.savez(run / "prior.npz", prior=np.zeros((3, 3), np.float32))
    with pytest.raises(PriorError, match=r"run/prior.npz: a prior of shape \(3, 3\)"):
        load_prior(run)
    (run / "prior.npz").write_bytes(good_npz)
    (run / "prior.json").write_text("{")
    with pytest.raises(PriorError, match="prior.json: not a readable program prior"):
        load_prior(run)
    # a prior that does not record a setting would take today's default for it: refused
    meta = json.loads(good_json)
    del meta["config"]["program"]["exploring_starts"]
    (run / "prior.json").write_text(json.dumps(meta))
    with pytest.raises(PriorError, match="records no setting exploring_starts"):
        load_prior(run)
    meta = json.loads(good_json)
    meta["config"]["program"]["credit"] = "program"  # made by an ablation's learner
    (run / "prior.json").write_text(json.dumps(meta))
    with pytest.raises(PriorError, match="experimental learner setting credit='program'"):
        load_prior(run)
    with pytest.raises(PriorError, match="no such file"):
        load_prior(tmp_path / "nowhere")


def test_the_shipped_prior_is_the_stored_one_and_saw_only_training_tasks_outside_tuning() -> None:
    """``jaxarc solve``'s default prior (package data) is byte for byte the stored
    ``program_prior_frontier`` the scores come from; it loads with the default learner and
    was pretrained on ARC-AGI-1 training tasks 100-399 only, whose content hashes it records.
    The older stored prior does not record every learner setting, so it is refused rather
    than run with today's defaults."""
    from jaxarc.data import load_bank
    from jaxarc.solve.program_rl_method import DEFAULT_PRIOR_DIR

    bank = load_bank("arc-agi-1/training")
    training = list(bank.task_ids)
    stored = STORED_PRIORS / "program_prior_frontier"
    for name in (PRIOR_FILE, PRIOR_INFO):
        assert (DEFAULT_PRIOR_DIR / name).read_bytes() == (stored / name).read_bytes()
    _, config = load_prior(DEFAULT_PRIOR_DIR)
    assert config.program == ProgramRLConfig()
    for run_dir in (DEFAULT_PRIOR_DIR, STORED_PRIORS / "program_prior"):
        meta = json.loads((run_dir / PRIOR_INFO).read_text())
        assert meta["source"] == "arc-agi-1/training[100:400]"
        assert set(meta["tasks"]) == set(training[100:])
    pretrained_on = problems_from_bank(bank.subset(range(100, len(training))))
    recorded = json.loads((DEFAULT_PRIOR_DIR / PRIOR_INFO).read_text())["task_hashes"]
    assert recorded == [task_content_hash(p) for p in pretrained_on]
    with pytest.raises(PriorError, match="records no setting exploring_starts"):
        load_prior(STORED_PRIORS / "program_prior")
    assert {"solve/priors/*/prior.npz", "solve/priors/*/prior.json"} <= package_data()


def package_data() -> set[str]:
    """The package-data patterns ``pyproject.toml`` ships with ``jaxarc``."""
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    return set(pyproject["tool"]["setuptools"]["package-data"]["jaxarc"])


@pytest.mark.slow  # learns three tasks, fits the prior (~30 s)
def test_the_prior_learns_which_kinds_solved_tasks_and_starts_the_next_task_there() -> None:
    flips = [_task(f"flip{k}", np.fliplr, 10 + k) for k in range(3)]
    config = PriorConfig(rounds=1, program=SMALL)
    prior, history = train_prior(flips, config, jax.random.key(0))
    assert history[0]["tasks_solved"] == ["flip0", "flip1", "flip2"]
    flip_kind = (ops.FLIP_LR + 1) * BOX_CLASSES + 1
    start = initial_prior(SMALL)[0]
    assert prior[0, flip_kind] > start[flip_kind] + 1
    assert np.argmax(prior[0, 1:]) + 1 == flip_kind  # the likeliest first action, after stop
    fresh = _task("flip-new", np.fliplr, 20)
    frozen = dataclasses.replace(SMALL, updates=0)
    _, from_prior = program_rl_attempts(fresh, frozen, jax.random.key(0), prior)
    assert from_prior["greedy_solves_demos"]  # no update: the prior's own first program


def _write_dir(root: Path, tasks: list[Problem], outputs: str) -> Path:
    root.mkdir(parents=True)
    for task in tasks:
        rule = np.fliplr if task.task_id.startswith("flip") else (lambda g: np.rot90(g, 2))
        test_out = {"true": rule, "corrupt": lambda g: np.full((2, 2), 9, np.int8)}[outputs]
        body = {
            "train": [
                {"input": a.tolist(), "output": b.tolist()}
                for a, b in zip(task.demo_inputs, task.demo_outputs, strict=True)
            ],
            "test": [
                {"input": g.tolist(), "output": test_out(g).tolist()} for g in task.test_inputs
            ],
        }
        (root / f"{task.task_id}.json").write_text(json.dumps(body))
    return root


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main([*argv])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.long  # program-rl is not the default; test_prior_overlap pretrains and solves too
@pytest.mark.slow  # pretrains, then solves twice (~60 s)
def test_pretrain_then_solve_from_the_prior_never_reads_a_test_output(
    tmp_path: Path, capsys
) -> None:
    train = [_task(f"flip{k}", np.fliplr, 30 + k) for k in range(2)]
    source = _write_dir(tmp_path / "train", train, "true")
    prior_dir = tmp_path / "prior"
    argv = ["pretrain-programs", "--no-compile-cache", "--source", str(source)]
    code, out, err = _run(capsys, *argv, "--rounds", "1", "--run-dir", str(prior_dir))
    assert code == 0, err
    assert "a sampled or greedy program solved every demonstration of 2 of 2 tasks" in out
    recorded = json.loads((prior_dir / PRIOR_INFO).read_text())["task_hashes"]
    assert recorded == [task_content_hash(task) for task in train]
    held_out = [_task("flip-a", np.fliplr, 40), _task("half-b", lambda g: np.rot90(g, 2), 41)]
    submissions = {}
    for kind in ("true", "corrupt"):
        solve_source = _write_dir(tmp_path / kind, held_out, kind)
        out_file = tmp_path / f"{kind}.json"
        argv = ["solve", "--no-compile-cache", "--source", str(solve_source)]
        argv += ["--prior", str(prior_dir), "--budget", "2048", "--out", str(out_file)]
        code, out, err = _run(capsys, *argv)
        assert code == 0, err
        submissions[kind] = json.loads(out_file.read_text())
        report = json.loads(out_file.with_suffix(".report.json").read_text())
        assert report["method"] == "program-rl" and report["prior"] == str(prior_dir)
        assert report["program_rl"]["updates"] == 2048 // (64 * 16)
        assert report["seen_by_prior"] == [] and "prior saw" not in out
    assert submissions["true"] == submissions["corrupt"]
    truth = json.loads((tmp_path / "true.report.json").read_text())
    assert truth["tasks"]["flip-a"]["greedy_solves_demos"] and truth["tasks"]["flip-a"]["solved"]


def test_program_rl_bad_input_is_one_line_and_nothing_written(tmp_path: Path, capsys) -> None:
    source = _write_dir(tmp_path / "tasks", [_task("flip", np.fliplr, 50)], "true")
    prior_dir = tmp_path / "prior"
    save_prior(prior_dir, initial_prior(ProgramRLConfig()), PriorConfig(), {})
    damaged = tmp_path / "damaged"
    save_prior(damaged, initial_prior(ProgramRLConfig()), PriorConfig(), {})
    (damaged / "prior.npz").write_bytes((damaged / "prior.npz").read_bytes()[:100])
    empty = tmp_path / "empty"
    save_prior(empty, initial_prior(ProgramRLConfig()), PriorConfig(), {})
    (empty / "prior.npz").write_bytes(b"")
    out = tmp_path / "out.json"
    base = ["solve", "--no-compile-cache", "--source", str(source), "--out", str(out)]
    for extra, message in [
        (["--prior", str(tmp_path)], "prior.npz: no such file"),
        (["--prior", str(damaged)], "damaged/prior.npz: damaged, not a readable program prior"),
        (["--prior", str(empty)], "empty/prior.npz: damaged, not a readable program prior"),
        (["--checkpoint", str(damaged)], "is a program prior: give it as --prior"),
        (["--method", "program-rl", "--budget", "10"], "one program-rl update takes 1024"),
        (["--prior", "none", "--budget", "10"], "one program-rl update takes 1024"),
        (["--method", "program-rl", "--budget", "5s"], "not seconds"),
        (
            ["--method", "program-rl", "--depth", "3"],
            "--depth applies to --method search or random, not program-rl",
        ),
        (["--method", "policy", "--checkpoint", str(prior_dir)], "is a program prior"),
        (["--method", "search", "--prior", str(prior_dir)], "--prior applies to --method"),
        (["--method", "search", "--checkpoint", str(tmp_path)], "applies to --method policy"),
    ]:
        code, _, err = _run(capsys, *base, *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
        assert "internal error" not in err and not out.exists()
    argv = ["pretrain-programs", "--source", str(source), "--skip", "5", "--run-dir"]
    code, _, err = _run(capsys, *argv, str(tmp_path / "p2"))
    assert code == 2 and "--skip 5: " in err and not (tmp_path / "p2").exists()


def test_the_ablation_script_types_its_variants_and_splits_training_tasks_only() -> None:
    """``benchmarks/program_rl_ablation.py`` (docs/results.md, "The program learner's
    settings"): a variant's settings take their fields' types, an unknown field or a bad
    boolean ends the script with the reason, and the reachable split is the training tasks
    the search report marks solved."""
    import runpy

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "program_rl_ablation.py"
    module = runpy.run_path(str(script))
    name, changes = module["parse_variant"]("wide:group_size=128,explore_from_memory=False")
    assert name == "wide" and changes == {"group_size": 128, "explore_from_memory": False}
    config, variant = module["learner"](changes)  # each field to its config, of its type
    assert config == ProgramRLConfig(group_size=128)
    assert variant == LearnerVariant(explore_from_memory=False)
    assert module["parse_variant"]("default") == ("default", {})
    for bad, reason in [
        ("x:width=3", "LearnerVariant has a field 'width'"),
        ("x:memory=yes", "True or False"),
    ]:
        with pytest.raises(SystemExit, match=re.escape(reason)):
            module["parse_variant"](bad)
    report = json.loads(module["SEARCH_REPORT"].read_text())["tasks"]
    ids = list(report)  # the report lists the training tasks in the source's order
    reachable = module["split_indices"]("reachable", ids)
    assert [ids[k] for k in reachable] == [t for t in ids if report[t]["solved"]]
    assert module["split_indices"]("tuning", ids) == list(range(100))
