"""``jaxarc bench train`` reports the surrogate step's FLOPs and achieved FLOP/s next to a
same-run matmul, and the policy's FLOPs per environment step (small shapes; the FLOP part of
the benchmark on a real rollout batch and a real compiled step)."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import pytest

from jaxarc.agents import (
    GRPOConfig,
    PolicyConfig,
    TrainConfig,
    make_optimizer,
    make_policy,
)
from jaxarc.benchmarking.train_bench import make_collect
from jaxarc.benchmarking.train_flops import flops_measurements
from jaxarc.cli.bench_train import flops_rows

TINY = TrainConfig(
    batch_tasks=2,
    group_size=2,
    max_episode_steps=2,
    policy=PolicyConfig(
        channels=4, pair_channels=4, context_size=8, head_hidden=8, in_context_prediction=False
    ),
    grpo=GRPOConfig(epochs=1, minibatches=1),
)


@pytest.mark.long  # compiles and times a whole update (make test-long)
def test_bench_train_reports_step_flops_and_a_same_run_matmul():
    policy = make_policy(jax.random.key(0), TINY.policy, TINY.env_config())
    optimizer = make_optimizer(TINY)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    batch = make_collect(TINY)(policy, jax.random.key(1))
    # the step's measured time is an input here (the benchmark times the step it compiled):
    # any positive number tests the arithmetic, without compiling the step a second time
    seconds = 0.0125

    results = flops_measurements(policy, opt_state, batch, optimizer, TINY.grpo, seconds)
    flops = results["step_flops"]
    assert math.isfinite(flops) and flops > 0
    achieved = results["step_flops_per_second"]
    assert math.isclose(achieved, flops / seconds)
    matmul = results["matmul"]
    assert matmul["flops"] == 2.0 * matmul["n"] ** 3 and matmul["seconds"] > 0
    assert math.isclose(matmul["flops_per_second"], matmul["flops"] / matmul["seconds"])
    assert math.isclose(results["step_vs_matmul"], achieved / matmul["flops_per_second"])
    encode, act = results["policy_encode_task_flops"], results["policy_act_flops"]
    assert encode > 0 and act > 0
    steps = TINY.max_episode_steps
    assert math.isclose(results["policy_flops_per_env_step"], encode / steps + act)
    # the step is forward + backward over every step of the minibatch: more than the forward
    # alone (each task encoded once, every step acted on)
    episodes = TINY.batch_tasks * TINY.group_size
    assert flops > TINY.batch_tasks * encode + episodes * steps * act

    rows = dict(flops_rows(dict(results, config={"max_episode_steps": steps})))
    assert rows["surrogate step FLOPs (XLA cost analysis)"] == f"{flops / 1e9:.2f} GFLOP"
    assert rows["surrogate step achieved FLOP/s"] == f"{achieved / 1e9:.1f} GFLOP/s"
    assert rows["same-run float32 matmul (practical peak)"].startswith(
        f"{matmul['n']}x{matmul['n']}: "
    )
    assert rows["surrogate step / matmul FLOP/s"].endswith("%")
    assert "policy FLOPs per env step (encode_task / T + act)" in rows


def test_bench_train_flags_choose_the_step_sizes_and_can_skip_the_eager_run(capsys):
    import pytest

    from jaxarc.cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["bench", "train"])
    assert (args.eager_steps, args.step_episodes) == (2, (1, 8))
    args = parser.parse_args(["bench", "train", "--eager-steps", "0", "--step-episodes", "128"])
    assert (args.eager_steps, args.step_episodes) == (0, (128,))
    for bad, says in [
        (["--eager-steps", "-1"], "non-negative"),
        (["--step-episodes", "0,8"], "episode counts must be positive"),
        (["--step-episodes", "a"], "comma-separated integers"),
    ]:
        with pytest.raises(SystemExit):
            parser.parse_args(["bench", "train", *bad])
        assert says in capsys.readouterr().err


def test_bench_train_table_says_when_the_eager_run_was_skipped():
    from jaxarc.benchmarking.machine import device_description
    from jaxarc.cli.bench_train import format_table

    row = lambda n, eager: {  # noqa: E731
        "episodes": n,
        "compiled_seconds": 0.002,
        "eager_seconds": eager,
        "speedup": eager / 0.002,
    }
    results = {
        "config": {
            "batch_tasks": 2,
            "group_size": 2,
            "max_episode_steps": 2,
            "selection_format": "point",
            "minibatch_episodes": 4,
        },
        "step_compile_seconds": 1.0,
        "step_by_minibatch": [row(1, 0.5), row(4, float("nan"))],
        "step_flops": 1e9,
        "step_flops_per_second": 5e11,
        "matmul": {"n": 64, "flops_per_second": 1e12},
        "step_vs_matmul": 0.5,
        "policy_encode_task_flops": 2e6,
        "policy_act_flops": 1e6,
        "policy_flops_per_env_step": 2e6,
        "update_first_call_seconds": 2.0,
        "update_seconds": 0.01,
        "env_steps_per_second": 800.0,
        "rollout_share": 0.5,
        "steps_share": 0.5,
        "env_only_seconds": 0.001,
        "env_share": 0.1,
        "load_average_1min_after": 0.5,
        "devices": ["cpu:0"],
        "device_description": device_description(),
    }
    rows = dict(
        (name.strip(), value.strip())
        for name, value, *_ in (line.split("|")[1:3] for line in format_table(results).split("\n"))
    )
    assert rows["train step on 1 episodes: compiled / eager"] == "2.00 ms / 500 ms = 250x"
    assert rows["train step on 4 episodes: compiled / eager"] == "2.00 ms / not run"
    assert rows["devices"] == device_description()
    assert device_description().startswith(f"{jax.default_backend()} (")
    assert device_description().endswith(f"x {jax.devices()[0].device_kind})")
