"""`jaxarc train` / `jaxarc eval` and their parts: flags from the config dataclass, the JSONL
metrics log, learning-curve PNGs, exact resume, the NaN guard."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from agents_worker import policy_flags, tiny_policy
from PIL import Image
from tqdm import tqdm

from jaxarc.agents import GRPOConfig, TrainConfig, make_train
from jaxarc.agents.model.distributions import MASKED_LOGIT, PointDistribution
from jaxarc.agents.model.policy import AbstractPolicy, PolicyConfig, make_policy
from jaxarc.agents.run.checkpoint import config_from_dict, list_checkpoints, load_checkpoint
from jaxarc.agents.run.evaluate import EvaluationError, evaluate_policy
from jaxarc.agents.run.metrics_log import MetricsLog, deterministic_part, read_metrics
from jaxarc.agents.run.plotting import (
    PlottingUnavailableError,
    draw_learning_curve,
    moving_average,
    plot_learning_curve,
    plot_run_curve,
)
from jaxarc.agents.run.progress import COMPILING, Stage, show_update, training_stages
from jaxarc.agents.run.training_loop import (
    NonFiniteLossError,
    RunOptions,
    run_training,
)
from jaxarc.cli.dataclass_flags import (
    add_dataclass_flags,
    apply_overrides,
    describe_config,
    overrides_from_args,
)
from jaxarc.cli.main import main
from jaxarc.data.stacking import bank_from_tasks
from jaxarc.envs import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs.types import ArcObservation
from jaxarc.grid import operation_ids as ops

# ----------------------------------------------------------------- flags from a dataclass


@dataclasses.dataclass(frozen=True)
class _Optim:
    """Optimiser.

    Attributes:
        lr: the ``step`` size,
            per update.
    """

    lr: float = 1e-3
    max_grad_norm: float | None = 1.0


@dataclasses.dataclass(frozen=True)
class _Config:
    seed: int = 0  # PRNG seed of 100% of the randomness
    advantage: Literal["group", "none", "rloo"] = "group"
    normalize: bool = True
    allowed_operations: tuple[int, ...] | None = None
    optim: _Optim = _Optim()

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")


def _parse(argv: list[str]) -> _Config:
    parser = argparse.ArgumentParser(prog="t", exit_on_error=False)
    specs = add_dataclass_flags(parser, _Config())
    return apply_overrides(_Config(), overrides_from_args(parser.parse_args(argv), specs))


def test_every_field_becomes_a_flag_and_overrides_only_what_is_given() -> None:
    parser = argparse.ArgumentParser()
    specs = add_dataclass_flags(parser, _Config())
    assert [s.flag for s in specs] == [
        "--seed",
        "--advantage",
        "--normalize",
        "--allowed-operations",
        "--optim-lr",
        "--optim-max-grad-norm",
    ]
    assert _parse([]) == _Config()
    config = _parse(
        [
            "--seed",
            "3",
            "--advantage",
            "rloo",
            "--no-normalize",
            "--allowed-operations",
            "0",
            "5",
            "34",
            "--optim-lr",
            "0.5",
            "--optim-max-grad-norm",
            "none",
        ]
    )
    assert config == _Config(3, "rloo", False, (0, 5, 34), _Optim(0.5, None))
    assert _parse(["--allowed-operations", "none"]).allowed_operations is None
    help_text = parser.format_help()
    assert "--advantage {group,none,rloo}" in help_text and "(default: group)" in help_text
    assert "the step size, per update. (default: 0.001)" in " ".join(help_text.split())
    assert "PRNG seed of 100% of the randomness (default: 0)" in " ".join(help_text.split())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "x"], "--seed expects int, got 'x'"),
        (["--advantage", "ppo"], "invalid choice"),
        (["--optim-lr", "fast"], "--optim-lr expects float, got 'fast'"),
        (["--optim-max-grad-norm", "x"], "--optim-max-grad-norm expects float or none"),
    ],
)
def test_bad_flag_values_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="t")
    add_dataclass_flags(parser, _Config())
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_validation_of_the_dataclass_still_runs() -> None:
    with pytest.raises(ValueError, match="seed must be >= 0"):
        _parse(["--seed", "-1"])
    text = describe_config(_Config())
    assert "advantage = 'group'" in text and "optim: _Optim" in text and "lr = 0.001" in text


# ----------------------------------------------------------------- metrics log and curves


def test_metrics_log_appends_and_truncates_on_resume(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    with MetricsLog(path) as log:
        for update in range(1, 6):
            log.write(update, {"loss": np.float32(1.0 / update), "time/seconds": 0.1})
    records = read_metrics(path)
    assert [r["update"] for r in records] == [1, 2, 3, 4, 5]
    assert records[1]["loss"] == pytest.approx(0.5)
    assert deterministic_part(records[1]) == {"update": 2, "loss": 0.5}
    # resuming from the checkpoint of update 3 forgets updates 4 and 5 of the crashed run
    with MetricsLog(path, resume_after=3) as log:
        log.write(4, {"loss": 9.0})
    assert [(r["update"], r["loss"]) for r in read_metrics(path)][-2:] == [
        (3, float(np.float32(1 / 3))),
        (4, 9.0),
    ]
    with MetricsLog(path) as log:  # a fresh run starts a fresh file
        log.write(1, {"loss": float("nan")})
    assert read_metrics(path) == [{"update": 1, "loss": "nan"}]
    with pytest.raises(ValueError, match="must be scalars"):
        MetricsLog(path).write(2, {"loss": np.zeros(3)})


def test_learning_curve_png(tmp_path: Path) -> None:
    records = [
        {"update": u, "success_rate": u / 40, "loss": 1.0 / u}
        | ({"eval_success/flip": u / 80, "eval_success/move": 0.5} if u % 10 == 0 else {})
        for u in range(1, 41)
    ]
    metrics = ["success_rate", "loss", "kl"]
    figure = draw_learning_curve(records, metrics, title="t")
    success, loss, families = figure.axes  # kl is absent; the families get a panel
    for rate_axis in (success, families):  # 0-100% whatever the values
        low, high = rate_axis.get_ylim()
        assert -5 < low <= 0 and 100 <= high < 105
        assert list(rate_axis.get_yticks()) == [0, 20, 40, 60, 80, 100]
        assert rate_axis.yaxis.get_major_formatter()(50, 0) == "50%"
    assert loss.get_ylim()[1] < 2  # other metrics keep their own scale
    ticks = [t for t in families.get_xticks() if 1 <= t <= 40]
    assert ticks and all(float(t).is_integer() for t in ticks)
    assert sorted(line.get_label() for line in families.get_lines()) == ["flip", "move"]
    np.testing.assert_allclose(families.get_lines()[0].get_xdata(), [10, 20, 30, 40])
    path = plot_learning_curve(records, tmp_path / "curve.png", metrics)
    assert Image.open(path).format == "PNG"
    np.testing.assert_allclose(moving_average(np.array([1.0, 3.0, np.nan, 5.0]), 2), [1, 2, 3, 5])
    with pytest.raises(ValueError, match="none of the metrics"):
        plot_learning_curve(records[:1], tmp_path / "x.png", ["nope"])


def _staged_records() -> list[dict]:
    """Six behaviour-cloning updates, then four GRPO updates without a KL term and with a
    clip fraction that stays 0; held-out evaluations at updates 5 and 10."""
    records = []
    for u in range(1, 11):
        bc = u <= 6
        record = {"update": u, "stage_bc": 1.0 if bc else 0.0, "loss": 5.0 / u if bc else -0.1 * u}
        if not bc:
            kl = 1e-9 * (u % 3 - 1)  # a KL estimate without a KL term: 0 up to rounding
            record |= {"kl": kl, "clip_fraction": 0.0, "entropy": 1.0 / u, "success_rate": 0.0}
        if u % 5 == 0:
            record |= {"eval_success_rate": u / 10, "eval_success/flip": u / 20}
        records.append(record)
    return records


def test_learning_curve_panels_come_from_the_records(tmp_path: Path) -> None:
    records = _staged_records()
    references = {"untrained (update 0)": 0.0, "uniform random policy": 0.016}
    figure = draw_learning_curve(
        records,
        ["eval_success_rate", "success_rate", "loss", "kl", "clip_fraction", "entropy"],
        references=references,
        held_out_tasks=64,
    )
    titles = [axis.get_title(loc="left") for axis in figure.axes]
    # kl (no KL term) and clip_fraction (constant) carry nothing; a rate at 0% does; the
    # loss is one panel per stage
    assert titles == [
        "held-out greedy success (64 tasks)",
        "training success (sampled actions)",
        "behaviour-cloning loss",
        "GRPO surrogate loss",
        "entropy",
        "held-out greedy success by family (64 tasks)",
    ]
    held_out, _, bc_loss, grpo_loss, *_ = figure.axes
    (bc_line,) = [line for line in bc_loss.get_lines() if len(line.get_xdata()) > 2][:1]
    assert set(bc_line.get_xdata()) <= set(range(1, 7))  # never spliced with GRPO's loss
    for line in grpo_loss.get_lines():
        if len(line.get_xdata()) > 2:
            assert set(line.get_xdata()) <= set(range(7, 11))
    for axis in figure.axes:  # the BC -> GRPO switch, between updates 6 and 7, in every panel
        switches = [line for line in axis.get_lines() if list(line.get_xdata()) == [6.5, 6.5]]
        assert len(switches) == 1
    labels = held_out.get_legend_handles_labels()[1]
    assert "untrained (update 0): 0.0%" in labels and "uniform random policy: 1.6%" in labels
    assert "behaviour cloning (updates 1-6)" in labels and "GRPO (updates 7-10)" in labels
    levels = {tuple(line.get_ydata()) for line in held_out.get_lines()}
    assert (0.0, 0.0) in levels and (1.6, 1.6) in levels  # the references, in percent
    path = plot_run_curve(records, tmp_path / "run.png", references=references, held_out_tasks=64)
    assert Image.open(path).format == "PNG"


def test_learning_curve_without_matplotlib_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(PlottingUnavailableError, match=r"jaxarc\[plot\]"):
        plot_learning_curve([{"update": 1, "loss": 1.0}], tmp_path / "c.png", ["loss"])


def test_progress_bar_shows_each_update_with_its_own_metrics() -> None:
    stream = io.StringIO()
    grpo = Stage("GRPO", 1, 3)
    bar = tqdm(total=3, file=stream, mininterval=0, desc=grpo.compiling(), ascii=True, ncols=400)
    bar.refresh()
    assert f"GRPO (updates 1-3): {COMPILING} the GRPO update" in stream.getvalue()
    records = [{"success_rate": 0.125 * u, "mean_return": u + 0.5} for u in (1, 2, 3)]
    for done, record in enumerate(records, start=1):
        show_update(bar, done, record, held_out=(2, 0.75) if done >= 2 else None, stage=grpo)
        last = stream.getvalue().split("\r")[-1]
        assert f"{done}/3" in last and f"GRPO (updates 1-3), update {done}" in last
        assert f"train sampled succ={12.5 * done:.1f}%" in last
        assert f"return={done + 0.5:.3g}" in last
        assert ("held-out greedy succ@2=75.0%" in last) == (done >= 2)
    bar.close()


def test_a_run_is_behaviour_cloning_then_grpo() -> None:
    stages = training_stages(TrainConfig.preset("quick"))
    assert [s.label for s in stages] == [
        "behaviour cloning (updates 1-80)",
        "GRPO (updates 81-130)",
    ]
    assert [s.label for s in training_stages(TrainConfig(num_updates=5))] == ["GRPO (updates 1-5)"]
    only_bc = TrainConfig(num_updates=5, bc_updates=5)
    assert [s.label for s in training_stages(only_bc)] == ["behaviour cloning (updates 1-5)"]


def test_json_records_are_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with MetricsLog(path) as log:
        log.write(1, {"a": float("inf"), "b": 2})
    assert json.loads(path.read_text().splitlines()[0]) == {"update": 1, "a": "inf", "b": 2}


# ----------------------------------------------------------------- jaxarc eval


class _SubmitAtOnce(AbstractPolicy):
    """Submits the start grid at the first step: solves exactly the pairs whose test output
    equals the test input (canvas-agnostic: no weights)."""

    def act(self, obs: ArcObservation, task: object) -> PointDistribution:
        op_logits = jnp.full(ops.NUM_OPERATIONS, MASKED_LOGIT, jnp.float32).at[ops.SUBMIT].set(0.0)
        cells = obs.grid.shape[0] * obs.grid.shape[1]
        return PointDistribution(
            op_logits, jnp.zeros((ops.NUM_OPERATIONS, cells), jnp.float32), obs.grid.shape[1]
        )


class _FlatLinearPolicy(AbstractPolicy):
    """Reads the grid through a dense layer: tied to its training canvas."""

    layer: eqx.nn.Linear

    def act(self, obs: ArcObservation, task: object) -> PointDistribution:
        op_logits = self.layer(obs.grid.reshape(-1).astype(jnp.float32))
        cells = obs.grid.shape[0] * obs.grid.shape[1]
        return PointDistribution(
            op_logits, jnp.zeros((ops.NUM_OPERATIONS, cells), jnp.float32), obs.grid.shape[1]
        )


def _pair(inp: list[list[int]], out: list[list[int]]) -> dict[str, list[list[int]]]:
    return {"input": inp, "output": out}


_A, _B = [[1, 2], [3, 4]], [[4, 3], [2, 1]]
_EVAL_TASKS = {
    "identity2": {"train": [_pair(_A, _A)], "test": [_pair(_A, _A), _pair(_B, _B)]},
    "reverse": {"train": [_pair(_A, _B)], "test": [_pair(_B, _A)]},
    "mixed": {"train": [_pair(_A, _A)], "test": [_pair(_A, _A), _pair(_A, _B)]},
}


def test_eval_scores_pass_at_k_by_task() -> None:
    bank = bank_from_tasks(_EVAL_TASKS, canvas_shape=(5, 5), name="hand")
    progress = []
    report = evaluate_policy(
        _SubmitAtOnce(),
        UnifiedActionConfig("point"),
        bank,
        attempts=2,
        max_episode_steps=2,
        batch_size=4,
        key=jax.random.key(0),
        progress=lambda done, total: progress.append((done, total)),
    )
    # 10 episodes (5 pairs x 2 attempts) in batches of 4: the tasks' episodes end at 4, 6, 10
    assert progress == [(0, 3), (1, 3), (2, 3), (3, 3)]
    by_id = {t["task_id"]: t for t in report["tasks"]}
    assert [p["solved"] for p in by_id["identity2"]["test_pairs"]] == [True, True]
    assert by_id["identity2"]["test_pairs"][0]["attempts"] == [True, True]
    assert [p["solved"] for p in by_id["reverse"]["test_pairs"]] == [False]
    assert [p["solved"] for p in by_id["mixed"]["test_pairs"]] == [True, False]
    assert [t["solved"] for t in report["tasks"]] == [True, False, False]
    assert (report["num_tasks"], report["solved_tasks"]) == (3, 1)
    assert (report["num_pairs"], report["solved_pairs"]) == (5, 3)
    assert report["solve_rate"] == pytest.approx(1 / 3)


def test_eval_runs_a_conv_policy_on_a_larger_canvas_and_rejects_a_dense_one() -> None:
    train_env = JaxArcConfig(dataset=UnifiedDatasetConfig(4, 4), action=UnifiedActionConfig())
    small = PolicyConfig(channels=4, trunk_layers=1, pair_channels=4, context_size=8, head_hidden=8)
    conv = make_policy(jax.random.key(0), small, train_env)
    bank = bank_from_tasks(_EVAL_TASKS, canvas_shape=(6, 6), name="hand")
    report = evaluate_policy(
        conv,
        train_env.action,
        bank,
        attempts=1,
        max_episode_steps=1,
        batch_size=8,
        key=jax.random.key(1),
    )
    assert report["num_pairs"] == 5 and len(report["tasks"]) == 3
    dense = _FlatLinearPolicy(eqx.nn.Linear(16, ops.NUM_OPERATIONS, key=jax.random.key(0)))
    with pytest.raises(EvaluationError, match=r"cannot read hand observations \(canvas \(6, 6\)"):
        evaluate_policy(
            dense,
            train_env.action,
            bank,
            attempts=1,
            max_episode_steps=1,
            batch_size=8,
            key=jax.random.key(1),
        )


# ----------------------------------------------------------------- the training driver

# two 2x2 tasks: the trainer compiles fast on a small fixed bank (a generator's program is
# larger); the canvas is the default bank canvas
_TRAIN_TASKS = {
    "recolour": {
        "train": [
            _pair([[1, 0], [0, 0]], [[2, 0], [0, 0]]),
            _pair([[0, 1], [0, 0]], [[0, 2], [0, 0]]),
        ],
        "test": [_pair([[0, 0], [1, 0]], [[0, 0], [2, 0]])],
    },
    "drop": {
        "train": [
            _pair([[3, 3], [0, 0]], [[0, 0], [3, 3]]),
            _pair([[4, 4], [0, 0]], [[0, 0], [4, 4]]),
        ],
        "test": [_pair([[5, 5], [0, 0]], [[0, 0], [5, 5]])],
    },
}


@pytest.fixture(scope="module")
def tiny_train(tmp_path_factory: pytest.TempPathFactory):
    """A tiny real config and a ``make_train`` that builds (and compiles) it only once."""
    path = tmp_path_factory.mktemp("tasks") / "tasks.json"
    path.write_text(json.dumps(_TRAIN_TASKS))
    config = TrainConfig(
        source=str(path),
        canvas=30,
        batch_tasks=2,
        group_size=2,
        max_episode_steps=2,
        num_updates=4,
        eval_tasks=2,
        grpo=GRPOConfig(epochs=1, minibatches=1),
        policy=tiny_policy(),  # (what these tests check is the run loop)
    )
    built: dict[TrainConfig, tuple] = {}

    def make_train_once(config: TrainConfig, mesh=None):
        if config not in built:
            built[config] = make_train(config, mesh)
        return built[config]

    return config, make_train_once


@pytest.fixture
def optax_promotion():
    """optax's Adam mixes int32 step counts with Python floats: not allowed under the strict
    promotion of tests/conftest.py, so the trainer is traced with standard promotion."""
    with jax.numpy_dtype_promotion("standard"):
        yield


class _Interrupt(Exception):
    pass


def _interrupt_after(update: int):
    def on_record(record: dict) -> None:
        if record["update"] == update:
            raise _Interrupt

    return on_record


def test_resumed_run_logs_exactly_what_an_uninterrupted_run_logs(
    tmp_path: Path, tiny_train, optax_promotion
) -> None:
    config, make_train_once = tiny_train
    straight = RunOptions(run_dir=tmp_path / "straight", checkpoint_every=2, eval_every=None)
    result = run_training(config, straight, make_train=make_train_once)
    assert [r["update"] for r in result.records] == [1, 2, 3, 4]
    assert result.last_checkpoint == straight.checkpoint_root / "update_00000004"
    assert straight.curve_path.is_file()

    # the second run is killed after update 3 was logged; its newest checkpoint is update 2
    options = RunOptions(run_dir=tmp_path / "resumed", checkpoint_every=2, eval_every=None)
    with pytest.raises(_Interrupt):
        run_training(config, options, make_train=make_train_once, on_record=_interrupt_after(3))
    assert [r["update"] for r in read_metrics(options.metrics_path)] == [1, 2, 3]
    with pytest.raises(FileExistsError, match="pass --resume"):
        run_training(config, options, make_train=make_train_once)
    resumed = run_training(
        config, dataclasses.replace(options, resume=True), make_train=make_train_once
    )
    first = [deterministic_part(r) for r in read_metrics(straight.metrics_path)]
    second = [deterministic_part(r) for r in read_metrics(options.metrics_path)]
    assert [r["update"] for r in second] == [1, 2, 3, 4]
    assert first == second  # bit-identical metrics, update 3 included
    assert len(first[0]) > 10 and {"loss", "kl", "clip_fraction", "mean_return"} <= set(first[0])
    straight_state = load_checkpoint(result.last_checkpoint, resumed.state).state
    for a, b in zip(
        jax.tree.leaves(eqx.filter(straight_state.policy, eqx.is_array)),
        jax.tree.leaves(eqx.filter(resumed.state.policy, eqx.is_array)),
        strict=True,
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    saved = json.loads((resumed.last_checkpoint / "config.json").read_text())
    assert config_from_dict(TrainConfig, saved) == config


def test_training_progress_names_stages_compiles_and_each_update_s_own_metrics(
    tmp_path: Path, tiny_train, optax_promotion, capsys: pytest.CaptureFixture[str]
) -> None:
    config, make_train_once = tiny_train
    # the bar's stages come from the config (bc_updates=2: updates 1-2, then 3-4); the tiny
    # trainer itself runs GRPO throughout, which does not matter to what the loop prints
    staged = config.replace(bc_updates=2)
    options = RunOptions(run_dir=tmp_path, eval_every=2, progress=True)
    result = run_training(staged, options, make_train=lambda c, mesh=None: make_train_once(config))
    drawn = [line for line in re.split(r"[\r\n]", capsys.readouterr().err) if line.strip()]
    before = (
        f"before training: the untrained policy on 2 held-out tasks ({COMPILING} the evaluator)"
    )
    assert before in drawn[0] and "0/4" in drawn[0]  # before the first update ends
    assert any("the uniform random policy on the same tasks" in line for line in drawn)
    assert any(line.startswith("held-out success before training, 2 tasks: ") for line in drawn)
    for stage in ("behaviour cloning (updates 1-2)", "GRPO (updates 3-4)"):
        name = stage.split(" (")[0]
        assert any(f"{stage}: {COMPILING} the {name} update" in line for line in drawn), stage
        assert any(line.startswith(f"{stage}: first update (compile included)") for line in drawn)
    for record in result.records:
        done = record["update"]
        lines = [line for line in drawn if f" {done}/4 " in line]
        assert lines, f"update {done} was never drawn"
        for line in lines:  # every drawing of update k carries update k's own metrics
            next_compile = f"{COMPILING} the GRPO update" in line  # drawn while at update k
            assert f"update {done}:" in line or f"update {done} " in line or next_compile
            assert f"train sampled succ={100 * record['success_rate']:.1f}%" in line
            assert f"return={record['mean_return']:.3g}" in line
    assert [r["update"] for r in result.records if "eval_success_rate" in r] == [2, 4]
    saved = json.loads(options.references_path.read_text())
    assert saved == result.references and saved["held_out_tasks"] == 2
    assert {"eval_success_rate"} <= set(saved["untrained"]) & set(saved["uniform_random"])
    assert options.curve_path.is_file()


def test_make_run_twice_starts_a_new_run_beside_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(_TRAIN_TASKS))
    argv = [
        "train", "--run-dir", str(tmp_path / "runs" / "quick"), "--fresh-run-dir",
        "--source", str(tasks), "--canvas", "30", "--batch-tasks", "2", "--group-size", "2",
        "--max-episode-steps", "2", "--num-updates", "1", "--eval-every", "0",
        "--grpo-epochs", "1", "--grpo-minibatches", "1", *policy_flags(tiny_policy()),
        "--no-progress", "--no-tensorboard",
        # the run's shared cache, where the tiny_train tests left this update program
        "--compile-cache-dir", os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(tmp_path),
    ]  # fmt: skip
    with jax.numpy_dtype_promotion("standard"):
        assert main(argv) == 0
        first = capsys.readouterr()
        assert main(argv) == 0  # the second run: a new run directory, never an error
        second = capsys.readouterr()
    runs = tmp_path / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["quick", "quick-2"]
    for run in ("quick", "quick-2"):
        assert [r["update"] for r in read_metrics(runs / run / "metrics.jsonl")] == [1]
    assert "holds an earlier run" not in first.err
    assert f"{runs / 'quick'} holds an earlier run" in second.err
    assert f"--run-dir {runs / 'quick'} --resume" in second.err  # how to continue the first
    assert f"run directory: {runs / 'quick-2'}" in second.out
    assert "done: 1 updates in " in second.out
    with pytest.raises(SystemExit):
        main([*argv, "--resume"])
    assert "--fresh-run-dir starts a new run" in capsys.readouterr().err


def test_non_finite_loss_stops_with_the_last_good_checkpoint_intact(
    tmp_path: Path, tiny_train, optax_promotion
) -> None:
    config, make_train_once = tiny_train

    def make_train_poisoned(config, mesh=None):
        init, update = make_train_once(config, mesh)

        def update_with_nan_weights_after_2(state):
            if int(state.update_index) == 2:  # a divergence: every weight becomes NaN
                poisoned = jax.tree.map(
                    lambda x: jnp.full_like(x, jnp.nan),
                    eqx.filter(state.policy, eqx.is_inexact_array),
                )
                state = eqx.tree_at(lambda s: s.policy, state, eqx.combine(poisoned, state.policy))
            return update(state)

        return init, update_with_nan_weights_after_2

    options = RunOptions(run_dir=tmp_path, checkpoint_every=1, eval_every=None)
    with pytest.raises(NonFiniteLossError, match=r"update 3: non-finite loss \(loss=nan") as err:
        run_training(config, options, make_train=make_train_poisoned)
    assert "update_00000002" in str(err.value)
    assert [p.name for p in list_checkpoints(options.checkpoint_root)] == [
        "update_00000001",
        "update_00000002",
    ]
    like = make_train_once(config, None)[0](jax.random.key(0))
    good = load_checkpoint(options.checkpoint_root / "update_00000002", like).state
    leaves = jax.tree.leaves(eqx.filter(good.policy, eqx.is_inexact_array))
    assert all(np.isfinite(np.asarray(x)).all() for x in leaves)
    assert read_metrics(options.metrics_path)[-1]["loss"] == "nan"


def test_cli_builds_the_config_from_preset_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["train", "--preset", "quick", "--lr", "0.002", "--grpo-beta", "0.02", "--dry-run"])
        == 0
    )
    out = capsys.readouterr().out
    assert "lr = 0.002" in out and "beta = 0.02" in out
    assert f"num_updates = {TrainConfig.preset('quick').num_updates}" in out
    with pytest.raises(SystemExit):
        main(["train", "--group-size", "1", "--dry-run"])
    assert "group_size must be at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--selection-format", "polygon", "--dry-run"])
    assert "invalid choice: 'polygon'" in capsys.readouterr().err


# ----------------------------------------------------------------- bad flags, NaN


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--lr", "inf"], "lr must be finite"),
        (["--lr", "nan"], "lr must be finite"),
        (["--max-grad-norm", "inf"], "max_grad_norm must be finite"),
        (["--warmup-updates", "-5"], "warmup_updates must be >= 0"),
        (["--eval-every", "-3"], "--eval-every"),
        (["--similarity-weight", "inf"], "similarity_weight must be finite"),
        (["--grpo-beta", "nan"], "beta must be finite"),
    ],
)
def test_bad_training_flags_are_refused_with_one_line(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--preset", "quick", *flags, "--dry-run"])
    assert exit_info.value.code != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_train_config_refuses_non_finite_and_negative_values() -> None:
    with pytest.raises(ValueError, match="lr must be finite"):
        TrainConfig(lr=float("inf"))
    with pytest.raises(ValueError, match="warmup_updates must be >= 0"):
        TrainConfig(warmup_updates=-5)
    with pytest.raises(ValueError, match="eps_high must be finite"):
        GRPOConfig(eps_high=float("inf"))


def _poison_after(make_train_once, update_index: int):
    """``make_train`` whose update ``update_index`` returns NaN weights with a finite loss (the
    loss is computed before the weights change, as in a real blow-up)."""

    def make_train_poisoned(config, mesh=None):
        init, update = make_train_once(config, mesh)

        def update_then_poison(state):
            state, metrics = update(state)
            if int(state.update_index) == update_index:
                poisoned = jax.tree.map(
                    lambda x: jnp.full_like(x, jnp.nan),
                    eqx.filter(state.policy, eqx.is_inexact_array),
                )
                state = eqx.tree_at(lambda s: s.policy, state, eqx.combine(poisoned, state.policy))
            return state, metrics

        return init, update_then_poison

    return make_train_poisoned


@pytest.mark.parametrize("poisoned_update", [2, 4])  # 4 is the final update
def test_non_finite_parameters_are_never_checkpointed(
    tmp_path: Path, tiny_train, optax_promotion, poisoned_update: int
) -> None:
    config, make_train_once = tiny_train
    options = RunOptions(run_dir=tmp_path, checkpoint_every=1, eval_every=None)
    with pytest.raises(NonFiniteLossError, match=f"update {poisoned_update}: non-finite") as err:
        run_training(config, options, make_train=_poison_after(make_train_once, poisoned_update))
    good = f"update_{poisoned_update - 1:08d}"
    assert good in str(err.value)
    assert list_checkpoints(options.checkpoint_root)[-1].name == good
    like = make_train_once(config, None)[0](jax.random.key(0))
    for path in list_checkpoints(options.checkpoint_root):
        meta = json.loads((path / "meta.json").read_text())
        assert meta["run_options"] == options.saved_settings()  # a plain --resume keeps them
        leaves = jax.tree.leaves(
            eqx.filter(load_checkpoint(path, like).state, eqx.is_inexact_array)
        )
        assert all(np.isfinite(np.asarray(x)).all() for x in leaves)


def _saved_run(
    tmp_path: Path, config: TrainConfig, run_options: dict, update_index: int = 1
) -> Path:
    """A run directory holding one checkpoint of ``config`` (after ``update_index`` updates)
    with saved run settings."""
    from jaxarc.agents.run.checkpoint import save_checkpoint

    state = {"weights": jnp.zeros(3)}
    save_checkpoint(
        tmp_path / "checkpoints",
        update_index,
        state,
        config,
        extra_meta={"run_options": run_options},
    )
    return tmp_path


def test_plain_resume_keeps_the_saved_cadence_and_flags_override_it(tmp_path: Path) -> None:
    from jaxarc.cli.main import build_parser
    from jaxarc.cli.train import RUN_SETTING_DEFAULTS, resolve_run_settings

    saved = {"checkpoint_every": 1, "keep_checkpoints": 2, "eval_every": None}
    run_dir = _saved_run(tmp_path, TrainConfig.preset("quick"), saved)
    checkpoint = run_dir / "checkpoints" / "update_00000001"
    parser = build_parser()
    plain = parser.parse_args(["train", "--run-dir", str(run_dir), "--resume"])
    assert resolve_run_settings(plain, checkpoint) == saved
    given = parser.parse_args(["train", "--resume", "--eval-every", "5", "--checkpoint-every", "7"])
    assert resolve_run_settings(given, checkpoint) == {
        "checkpoint_every": 7,
        "keep_checkpoints": 2,
        "eval_every": 5,
    }
    fresh = parser.parse_args(["train", "--eval-every", "0"])
    assert resolve_run_settings(fresh, None) == {**RUN_SETTING_DEFAULTS, "eval_every": None}


def test_resume_with_a_shape_changing_flag_is_a_one_line_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _saved_run(tmp_path, TrainConfig.preset("quick"), {})
    argv = ["train", "--run-dir", str(run_dir), "--resume", "--dry-run"]
    assert main([*argv, "--policy-channels", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--policy-channels" in err and "Traceback" not in err
    assert main([*argv, "--num-updates", "9"]) == 0  # extending a run is fine


def test_resume_to_a_total_already_reached_is_a_one_line_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--num-updates is the run's total, the updates done included (old: a total at or below
    the checkpoint's update was accepted, trained nothing and said nothing)."""
    config = dataclasses.replace(TrainConfig.preset("quick"), num_updates=130)
    run_dir = _saved_run(tmp_path, config, {}, update_index=100)
    argv = ["train", "--run-dir", str(run_dir), "--resume", "--dry-run"]
    for total in ("9", "100"):
        assert main([*argv, "--num-updates", total]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"--num-updates {total} is the run's total" in err, err
        assert "at update 100 of 130" in err and f"--num-updates {100 + int(total)}" in err, err
    assert main([*argv, "--num-updates", "101"]) == 0  # one more update: fine
    assert "num_updates" in capsys.readouterr().out


def test_a_full_disk_during_a_save_is_one_line_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(_TRAIN_TASKS))
    run_dir = tmp_path / "run"
    saves = []
    real_save = np.save

    def save_until_the_disk_is_full(f, array, *args, **kwargs):
        # the first checkpoint fits; the disk fills up during the second
        if any(".tmp-update_00000002" in str(p) for p in (getattr(f, "name", ""),)):
            raise OSError(28, "No space left on device")
        saves.append(1)
        real_save(f, array, *args, **kwargs)

    monkeypatch.setattr(np, "save", save_until_the_disk_is_full)
    argv = [
        "train", "--run-dir", str(run_dir), "--source", str(tasks), "--canvas", "30",
        "--batch-tasks", "2", "--group-size", "2", "--max-episode-steps", "2", "--num-updates", "3",
        "--eval-tasks", "2", "--grpo-epochs", "1", "--grpo-minibatches", "1",
        *policy_flags(tiny_policy()),
        "--checkpoint-every", "1", "--eval-every", "0", "--keep-checkpoints", "5",
        "--no-progress", "--no-tensorboard", "--no-compile-cache",
    ]  # fmt: skip
    with jax.numpy_dtype_promotion("standard"):
        assert main(argv) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("jaxarc: error")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "No space left on device" in errors[0] and "checkpoints are untouched" in errors[0]
    assert [p.name for p in list_checkpoints(run_dir / "checkpoints")] == ["update_00000001"]
    assert not [p for p in (run_dir / "checkpoints").iterdir() if p.name.startswith(".")]
    meta = json.loads((run_dir / "checkpoints" / "update_00000001" / "meta.json").read_text())
    assert meta["run_options"] == {"checkpoint_every": 1, "keep_checkpoints": 5, "eval_every": None}


def test_resume_past_a_damaged_checkpoint_logs_what_an_uninterrupted_run_logs(
    tmp_path: Path, tiny_train, optax_promotion
) -> None:
    from jaxarc.agents.run.checkpoint import CheckpointWarning

    config, make_train_once = tiny_train
    straight = RunOptions(run_dir=tmp_path / "straight", checkpoint_every=4, eval_every=None)
    run_training(config, straight, make_train=make_train_once)
    options = RunOptions(run_dir=tmp_path / "damaged", checkpoint_every=1, eval_every=None)
    with pytest.raises(_Interrupt):
        run_training(config, options, make_train=make_train_once, on_record=_interrupt_after(3))
    os.truncate(options.checkpoint_root / "update_00000003" / "state.eqx", 1000)
    with pytest.warns(CheckpointWarning, match=r"update_00000003.*sha256"):
        resumed = run_training(
            config, dataclasses.replace(options, resume=True), make_train=make_train_once
        )
    first = [deterministic_part(r) for r in read_metrics(straight.metrics_path)]
    second = [deterministic_part(r) for r in read_metrics(options.metrics_path)]
    assert [r["update"] for r in second] == [1, 2, 3, 4] and first == second
    assert resumed.last_checkpoint == options.checkpoint_root / "update_00000004"


def _weights(policy: AbstractPolicy) -> list[np.ndarray]:
    return [np.asarray(x) for x in jax.tree.leaves(eqx.filter(policy, eqx.is_array))]


def test_a_run_started_from_another_run_starts_from_its_policy(
    tmp_path: Path, tiny_train, optax_promotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """``init_from``: the second run's updates are those of a fresh state whose policy and
    reference are the first run's final policy (a fresh optimiser, update 0); the same
    policy set to another canvas loads too; a missing run or another action format is one
    line of ``jaxarc train``, before anything is built."""
    from jaxarc.agents.run.warm_start import warm_start

    config, make_train_once = tiny_train
    # one program for every seed and start (neither changes what is compiled)
    same_program = lambda c, mesh=None: make_train_once(  # noqa: E731
        c.replace(init_from=None, seed=config.seed), mesh
    )
    first = run_training(  # another seed: its policy is not the one seed 0 draws
        config.replace(seed=1),
        RunOptions(run_dir=tmp_path / "first", eval_every=None, progress=False),
        make_train=same_program,
    )
    warm = config.replace(init_from=str(tmp_path / "first"))
    second = run_training(
        warm,
        RunOptions(run_dir=tmp_path / "second", eval_every=None, progress=False),
        make_train=same_program,
    )
    init, update = make_train_once(config)
    state = init(jax.random.key(config.seed))
    state = eqx.tree_at(
        lambda s: (s.policy, s.ref_policy),
        state,
        (first.state.policy, first.state.policy),
    )
    # own buffers for every leaf (the update donates the policy and the reference)
    state = jax.tree.map(lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, state)
    for _ in range(config.num_updates):
        state, _ = update(state)
    for got, want in zip(_weights(second.state.policy), _weights(state.policy), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert json.loads((tmp_path / "second" / "config.json").read_text())["init_from"] == str(
        tmp_path / "first"
    )
    # another canvas: the same weights, set to read it
    bigger = warm.replace(canvas=20)
    state = warm_start(make_train(bigger)[0](jax.random.key(0)), bigger)
    assert state.policy.canvas == (20, 20)
    for got, want in zip(_weights(state.ref_policy), _weights(first.state.policy), strict=True):
        np.testing.assert_array_equal(got, want)

    source = ["--source", config.source, "--canvas", "30", "--dry-run"]
    for init_from, expected in [
        (tmp_path / "none", "no checkpoint found"),
        (tmp_path / "first", "selection_format"),
    ]:
        argv = ["train", "--run-dir", str(tmp_path / "third"), "--init-from", str(init_from)]
        assert main([*argv, *source, "--selection-format", "point"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--init-from" in err and expected in err, err
