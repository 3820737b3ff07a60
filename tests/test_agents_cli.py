"""`jaxarc train` / `jaxarc eval` and their parts: flags from the config dataclass, the JSONL
metrics log, learning-curve PNGs, exact resume, the NaN guard."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from PIL import Image

from jaxarc.agents.metrics_log import MetricsLog, deterministic_part, read_metrics
from jaxarc.agents.plotting import moving_average, plot_learning_curve
from jaxarc.cli.dataclass_flags import (
    add_dataclass_flags,
    apply_overrides,
    describe_config,
    overrides_from_args,
)

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
