"""Size and cost of a preset's policy: parameters and XLA-counted FLOPs per episode and step.

    python benchmarks/policy_cost.py --preset medium

Counts the inexact array leaves of the freshly initialised policy (learned predictor
included) and asks XLA's cost analysis (``jit(...).lower(...).compile().cost_analysis()``)
for the FLOPs of ``encode_task`` (once per episode: the demonstration pairs) and of ``act``
(once per step) on one reset observation of the preset's source and canvas.
"""

from __future__ import annotations

import argparse

import equinox as eqx
import jax
import numpy as np

from jaxarc.agents import TrainConfig, make_policy
from jaxarc.agents.grpo.train import load_task_source
from jaxarc.envs.functional import arc_reset


def flops(fn, *args) -> float:
    cost = jax.jit(fn).lower(*args).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    return float(cost.get("flops", float("nan")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="medium")
    args = parser.parse_args()
    config = TrainConfig.preset(args.preset)
    env_config = config.env_config()
    policy = make_policy(jax.random.key(0), config.policy, env_config)
    params = eqx.filter(policy, eqx.is_inexact_array)
    count = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(params))
    predictor = sum(
        int(np.prod(x.shape))
        for x in jax.tree.leaves(eqx.filter(policy.learned_predictor, eqx.is_inexact_array))
    )
    _, obs = arc_reset(jax.random.key(1), env_config, load_task_source(config))
    task = policy.encode_task(obs)
    params, static = eqx.partition(policy, eqx.is_array)
    rebuilt = lambda p: eqx.combine(p, static)  # noqa: E731
    encode = flops(lambda p, o: rebuilt(p).encode_task(o), params, obs)
    act = flops(lambda p, o, t: jax.tree.leaves(rebuilt(p).act(o, t)), params, obs, task)
    steps = config.max_episode_steps
    print(
        "| preset | parameters (predictor) | encode_task MFLOP | act MFLOP | "
        f"per step, {steps}-step episode |"
    )
    print("|---|---|---|---|---|")
    print(
        f"| {args.preset} | {count:,} ({predictor:,}) | {encode / 1e6:.1f} | {act / 1e6:.2f} | "
        f"{(encode / steps + act) / 1e6:.1f} |"
    )


if __name__ == "__main__":
    main()
