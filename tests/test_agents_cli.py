"""`jaxarc train` / `jaxarc eval` and their parts: flags from the config dataclass, the JSONL
metrics log, learning-curve PNGs, exact resume, the NaN guard."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image

from jaxarc.agents.distributions import MASKED_LOGIT, PointDistribution
from jaxarc.agents.evaluate import EvaluationError, evaluate_policy
from jaxarc.agents.metrics_log import MetricsLog, deterministic_part, read_metrics
from jaxarc.agents.plotting import moving_average, plot_learning_curve
from jaxarc.agents.policy import AbstractPolicy, PolicyConfig, make_policy
from jaxarc.cli.dataclass_flags import (
    add_dataclass_flags,
    apply_overrides,
    describe_config,
    overrides_from_args,
)
from jaxarc.data.stacking import bank_from_tasks
from jaxarc.envs import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs import operation_ids as ops
from jaxarc.envs.types import ArcObservation

# ----------------------------------------------------------------- flags from a dataclass


@dataclasses.dataclass(frozen=True)
class _Optim:
    lr: float = 1e-3
    max_grad_norm: float | None = 1.0


@dataclasses.dataclass(frozen=True)
class _Config:
    seed: int = 0
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
    records = [{"update": u, "success_rate": u / 40, "loss": 1.0 / u} for u in range(1, 41)]
    path = plot_learning_curve(records, tmp_path / "curve.png", ["success_rate", "loss", "kl"])
    image = np.asarray(Image.open(path).convert("RGB"))
    assert image.shape == (2 * 240, 720, 3)  # two panels: kl is absent
    smooth = np.all(image == np.array([20, 80, 170], dtype=np.uint8), axis=-1)
    rows, cols = np.nonzero(smooth[:240])
    # success rises: the curve's right end is higher up (smaller row) than its left end
    assert rows[cols == cols.max()].mean() < rows[cols == cols.min()].mean()
    np.testing.assert_allclose(moving_average(np.array([1.0, 3.0, np.nan, 5.0]), 2), [1, 2, 3, 5])
    with pytest.raises(ValueError, match="none of the metrics"):
        plot_learning_curve(records, tmp_path / "x.png", ["nope"])


def test_json_records_are_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with MetricsLog(path) as log:
        log.write(1, {"a": float("inf"), "b": 2})
    assert json.loads(path.read_text().splitlines()[0]) == {"update": 1, "a": "inf", "b": 2}


# ----------------------------------------------------------------- jaxarc eval


class _SubmitAtOnce(AbstractPolicy):
    """Submits the start grid at the first step: solves exactly the pairs whose test output
    equals the test input (canvas-agnostic: no weights)."""

    def __call__(self, obs: ArcObservation) -> PointDistribution:
        op_logits = jnp.full(ops.NUM_OPERATIONS, MASKED_LOGIT, jnp.float32).at[ops.SUBMIT].set(0.0)
        cells = obs.grid.shape[0] * obs.grid.shape[1]
        return PointDistribution(
            op_logits, jnp.zeros((ops.NUM_OPERATIONS, cells), jnp.float32), obs.grid.shape[1]
        )


class _FlatLinearPolicy(AbstractPolicy):
    """Reads the grid through a dense layer: tied to its training canvas."""

    layer: eqx.nn.Linear

    def __call__(self, obs: ArcObservation) -> PointDistribution:
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
    report = evaluate_policy(
        _SubmitAtOnce(),
        UnifiedActionConfig("point"),
        bank,
        attempts=2,
        max_steps=2,
        batch_size=4,
        key=jax.random.key(0),
    )
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
        conv, train_env.action, bank, attempts=1, max_steps=1, batch_size=8, key=jax.random.key(1)
    )
    assert report["num_pairs"] == 5 and len(report["tasks"]) == 3
    dense = _FlatLinearPolicy(eqx.nn.Linear(16, ops.NUM_OPERATIONS, key=jax.random.key(0)))
    with pytest.raises(EvaluationError, match=r"cannot read hand observations \(canvas \(6, 6\)"):
        evaluate_policy(
            dense,
            train_env.action,
            bank,
            attempts=1,
            max_steps=1,
            batch_size=8,
            key=jax.random.key(1),
        )
