"""``jaxarc bench train`` reports the surrogate step's FLOPs and achieved FLOP/s next to a
same-run matmul, and the policy's FLOPs per environment step (small shapes; the FLOP part of
the benchmark on a real rollout batch and a real compiled step)."""

from __future__ import annotations

import math
import time

import equinox as eqx
import jax

from jaxarc.agents import (
    GRPOConfig,
    PolicyConfig,
    TrainConfig,
    create_jax_surrogate_train_step,
    make_optimizer,
    make_policy,
)
from jaxarc.cli.bench_train import _make_collect, flops_measurements, flops_rows

TINY = TrainConfig(
    batch_tasks=2,
    group_size=2,
    max_episode_steps=2,
    policy=PolicyConfig(
        channels=4, pair_channels=4, context_size=8, head_hidden=8, in_context_prediction=False
    ),
    grpo=GRPOConfig(epochs=1, minibatches=1),
)


def test_bench_train_reports_step_flops_and_a_same_run_matmul():
    policy = make_policy(jax.random.key(0), TINY.policy, TINY.env_config())
    optimizer = make_optimizer(TINY)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    batch = _make_collect(TINY)(policy, jax.random.key(1))
    copy = lambda tree: jax.tree.map(lambda x: x.copy() if eqx.is_array(x) else x, tree)  # noqa: E731
    step = create_jax_surrogate_train_step(policy, optimizer, TINY.grpo)
    jax.block_until_ready(step(copy(policy), copy(opt_state), copy(batch)))
    tic = time.perf_counter()
    jax.block_until_ready(step(copy(policy), copy(opt_state), copy(batch)))
    seconds = time.perf_counter() - tic

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
