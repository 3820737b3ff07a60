"""CPU time of one batched step (B=4096 by default) inside ``lax.scan``: for A/B comparisons on a
shared machine, where wall-clock rates swing with the other jobs' load.

Run: ``python benchmarks/step_cpu_time.py FORMAT [--batch 4096] [--steps 50]``. The same
scan loop as ``jaxarc bench env`` (random valid actions from two words per environment),
timed with ``time.process_time`` (all threads of this process); prints CPU ms per step, the
rate that CPU time would give on 2 idle cores, and the compile + first run time.

``--face core`` and ``--face gymnax`` time the faces table's two loops instead (``jaxarc
bench env --faces``): the core with every episode kept in play, and ``jax.vmap(env.step)``
of ``jaxarc.make("ARC-AGI-1", ...)`` with auto-reset, on ``--episode-steps``-long episodes
(the faces table's 8 by default).
"""

from __future__ import annotations

import argparse
import os
import time

import jax

import jaxarc
from jaxarc.benchmarking.env_throughput import MASK_POOL, random_actions
from jaxarc.benchmarking.face_throughput import FACE_EPISODE_STEPS, face_scan_body
from jaxarc.data import load_source
from jaxarc.envs import (
    JaxArcConfig,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    batch_reset,
    batch_step,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("format", choices=("point", "bbox", "mask"))
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--face", choices=("none", "core", "gymnax"), default="none")
    parser.add_argument("--episode-steps", type=int, default=FACE_EPISODE_STEPS, help="with --face")
    args = parser.parse_args()
    batch, steps = args.batch, args.steps
    if args.face == "none":
        bank = load_source("arc-agi-1/training")
        config = JaxArcConfig(
            dataset=UnifiedDatasetConfig(*bank.canvas_shape),
            action=UnifiedActionConfig(selection_format=args.format),
        )
        env = params = None
    else:
        env, params = jaxarc.make(
            "ARC-AGI-1", selection_format=args.format, max_episode_steps=args.episode_steps
        )
        config, bank = env.config, env.task_source
    pool = jax.random.bernoulli(jax.random.key(7), 0.3, (MASK_POOL, *bank.canvas_shape))
    keys = jax.random.split(jax.random.key(0), batch)
    if args.face == "gymnax":
        states = jax.vmap(env.reset, (0, None))(keys, params)[1]
    else:
        states, _ = batch_reset(keys, config, bank)

    def plain_step(states, step_key):
        actions = random_actions(step_key, batch, config, pool)
        states, _, reward, _, _ = batch_step(states, actions, config)
        return states, reward

    # the faces table's own loops (the core kept in play, the gymnax face)
    body = plain_step if env is None else face_scan_body(args.face, env, params, batch, pool)

    @jax.jit
    def rollout(states, key):
        states, rewards = jax.lax.scan(body, states, jax.random.split(key, steps))
        return states.step_count, rewards.sum()

    start = time.perf_counter()
    jax.block_until_ready(rollout(states, jax.random.key(1)))
    compile_s = time.perf_counter() - start
    best_cpu = float("inf")
    for k in range(args.repeats):
        start_cpu = time.process_time()
        jax.block_until_ready(rollout(states, jax.random.key(2 + k)))
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    print(
        f"{args.format:5s} {args.face:6s} batch {batch}: "
        f"{1000 * best_cpu / steps:7.2f} CPU ms/step, "
        f"{batch * steps / (best_cpu / 2):,.0f} steps/s on 2 idle cores, "
        f"compile + first run {compile_s:.1f} s, load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
