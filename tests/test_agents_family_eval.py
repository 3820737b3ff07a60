"""Held-out success per family (the training loop's evaluator and ``jaxarc eval`` on
generators) and the zero-learning predictor-rule baseline: the rule floods exactly what the
hand-made predictor marks wrong, so it solves (nearly) every flood task and (nearly) no
geometric one, which the per-family split must show."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jaxarc.agents import TrainConfig
from jaxarc.agents.model.predictor_rule import predictor_rule_policy
from jaxarc.agents.run.distributed import make_data_mesh
from jaxarc.agents.run.family_eval import FAMILY_METRIC_PREFIX, success_by_family
from jaxarc.agents.run.training_loop import HELD_OUT_METRIC, make_held_out_evaluator
from jaxarc.cli.main import main
from jaxarc.data.generator_families import EASY_FAMILIES, GEOMETRIC_FAMILIES, MEDIUM_FAMILIES


def test_success_by_family_matches_a_direct_count():
    rng = np.random.default_rng(0)
    family = rng.integers(0, 5, 200).astype(np.int32)  # family 4 below is never drawn
    family[family == 4] = 3
    success = rng.random(200) < 0.4
    rates, counts = success_by_family(success, family, 5)
    for f in range(4):
        assert int(counts[f]) == int((family == f).sum())
        assert float(rates[f]) == pytest.approx(success[family == f].mean())
    assert int(counts[4]) == 0 and np.isnan(float(rates[4]))


def test_held_out_evaluator_splits_gen_medium_by_family():
    config = TrainConfig.preset("medium").replace(eval_tasks=64)
    evaluate = make_held_out_evaluator(config, make_data_mesh())
    metrics = evaluate(predictor_rule_policy("bbox", (config.canvas, config.canvas)))
    assert set(metrics) == {HELD_OUT_METRIC} | {FAMILY_METRIC_PREFIX + f for f in MEDIUM_FAMILIES}
    for family in EASY_FAMILIES:  # the predictor reads the flood rules (measured: ~100%)
        assert metrics[FAMILY_METRIC_PREFIX + family] >= 0.9
    for family in GEOMETRIC_FAMILIES:  # flooding (almost) never flips, rotates or moves a grid
        assert metrics[FAMILY_METRIC_PREFIX + family] <= 0.1
    assert 0.2 < metrics[HELD_OUT_METRIC] < 0.8


def test_eval_cli_scores_the_baseline_per_family_on_unseen_canvas_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out_path = tmp_path / "report.json"
    argv = ["eval", "--baseline", "predictor-rule", "--source", "gen/easy", "--by-family"]
    argv += ["--limit", "24", "--canvas", "10", "--min-side", "9", "--out", str(out_path)]
    argv += ["--no-compile-cache"]
    assert main(argv) == 0
    report = json.loads(out_path.read_text())
    assert report["canvas"] == [10, 10] and report["min_side"] == 9
    assert report["baseline"] == "predictor-rule" and report["checkpoint"] is None
    assert set(report["families"]) == set(EASY_FAMILIES)
    assert sum(f["episodes"] for f in report["families"].values()) == 24
    assert report["solve_rate"] == 1.0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "gen/easy: compiling the evaluator, then playing 24 fresh tasks in one call"
    assert out[1] == (
        "gen/easy: 100% of 24 fresh tasks solved (greedy actions; canvas 10x10, grids at least "
        "9 cells a side)"
    )
    assert [line.split()[0] for line in out[2:-1]] == list(report["families"])
    assert all(line.split()[1] == "100%" for line in out[2:-1])
    assert out[-1] == f"results: {out_path}"


def test_medium_preset_is_gen_medium_with_bbox_all_operations_and_no_predictor(
    capsys: pytest.CaptureFixture[str],
):
    config = TrainConfig.preset("medium")
    assert config.source == "gen/medium" and config.selection_format == "bbox"
    assert config.allowed_operations is None  # all 35 operations
    assert config.policy.in_context_prediction is False
    assert config.max_episode_steps >= 3  # the longest oracle (rot180, move) takes 3 actions
    # BC from the state expert first, then GRPO; the given whole-grid transform features on
    assert 0 < config.bc_updates < config.num_updates
    assert config.policy.learned_prediction and config.policy.pair_transforms
    assert main(["train", "--preset", "medium", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "source = 'gen/medium'" in out and "in_context_prediction = False" in out
    assert "pair_transforms = True" in out


def test_eval_cli_needs_exactly_one_of_checkpoint_and_baseline(
    capsys: pytest.CaptureFixture[str],
):
    with pytest.raises(SystemExit):
        main(["eval", "--source", "gen/easy"])
    assert "one of the arguments --checkpoint --baseline is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval", "--checkpoint", "x", "--baseline", "predictor-rule"])
    assert "not allowed with argument" in capsys.readouterr().err
