"""Thousands of environments at once: a random-action rollout with throughput printed.

python examples/batch_rollout.py [--num-envs 4096] [--steps 100] [--format point] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

import jaxarc
from jaxarc.envs import batch_reset, play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="ARC-AGI-1", help="a jaxarc.make name")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100, help="steps per environment per scan")
    parser.add_argument("--format", default="point", choices=("point", "bbox", "mask"))
    parser.add_argument("--repeats", type=int, default=2, help="timed scans after compiling")
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    if args.smoke:
        args.num_envs, args.steps, args.repeats = 32, 10, 1

    env, params = jaxarc.make(args.env, selection_format=args.format, max_episode_steps=args.steps)
    config, bank = env.config, env.task_source
    sample = jax.vmap(env.action_space(params).sample)  # valid random actions, batched

    @jax.jit
    def rollout(key):
        reset_key, step_key = jax.random.split(key)
        states, obs = batch_reset(jax.random.split(reset_key, args.num_envs), config, bank)

        def act(states, obs, key):  # any policy goes here: (states, obs, x) -> (actions, extra)
            return sample(jax.random.split(key, args.num_envs)), None

        states, _, steps = play(states, obs, config, act, jax.random.split(step_key, args.steps))
        return steps.rewards.sum(0), states.terminated, states.success

    start = time.perf_counter()
    jax.block_until_ready(rollout(jax.random.key(0)))
    compile_s = time.perf_counter() - start
    total_steps, seconds, solved, submitted = 0, 0.0, 0, 0
    for repeat in range(args.repeats):
        start = time.perf_counter()
        returns, terminated, success = jax.block_until_ready(rollout(jax.random.key(repeat + 1)))
        seconds += time.perf_counter() - start
        total_steps += args.num_envs * args.steps
        submitted += int(terminated.sum())
        solved += int(success.sum())
    print(f"{args.env} {args.format}: {args.num_envs} envs x {args.steps} steps x {args.repeats}")
    print(f"  first call (compile + run): {compile_s:.2f}s")
    print(f"  throughput: {total_steps / seconds:,.0f} steps/s ({seconds:.2f}s timed)")
    print(
        f"  episodes submitted: {submitted}, solved: {solved}, "
        f"mean return {float(jnp.mean(returns)):+.3f}"
    )


if __name__ == "__main__":
    main()
