"""Quickstart: the functional API (reset/step, batches, scans) and the gymnax class.

python examples/quickstart.py [--smoke]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

import jaxarc
from jaxarc.data import load_bank
from jaxarc.envs import (
    EnvironmentConfig,
    JaxArcConfig,
    PointAction,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    arc_reset,
    arc_step,
    batch_reset,
    batch_step,
)
from jaxarc.grid import operation_ids as ops
from jaxarc.render import to_ansi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    num_envs, num_steps = (8, 5) if args.smoke else (512, 50)

    # 1. one environment, step by step
    bank = load_bank("arc-agi-1/training")  # 400 tasks, padded to 30x30, cached on disk
    config = JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=50),
        dataset=UnifiedDatasetConfig(max_grid_height=30, max_grid_width=30),
        action=UnifiedActionConfig(selection_format="point"),
    )
    task_index = bank.task_ids.index("007bbfb7")
    state, obs = arc_reset(jax.random.key(0), config, bank, task_index=task_index, pair_index=0)
    print("input of 007bbfb7 pair 0:")
    print(to_ansi(obs.grid, shape=obs.grid_shape))
    action = PointAction(operation=ops.FILL_0 + 2, row=0, col=0)  # paint cell (0, 0) red
    state, obs, reward, done, info = arc_step(state, action, config)
    print(
        f"after FILL_2 at (0, 0): reward {float(reward):+.3f}, done {bool(done)}, "
        f"similarity {float(info['similarity']):.3f}"
    )
    print(to_ansi(obs.grid, shape=obs.grid_shape))

    # 2. a batch of environments, random actions, inside lax.scan
    keys = jax.random.split(jax.random.key(1), num_envs)
    states, _ = batch_reset(keys, config, bank)  # a random task and pair per environment

    def random_actions(key):
        op_key, row_key, col_key = jax.random.split(key, 3)
        return PointAction(
            jax.random.randint(op_key, (num_envs,), 0, ops.NUM_OPERATIONS, dtype=jnp.int32),
            jax.random.randint(row_key, (num_envs,), 0, 30, dtype=jnp.int32),
            jax.random.randint(col_key, (num_envs,), 0, 30, dtype=jnp.int32),
        )

    @jax.jit
    def rollout(states, key):
        def body(states, key):
            states, _, reward, done, info = batch_step(states, random_actions(key), config)
            return states, (reward, done)

        return jax.lax.scan(body, states, jax.random.split(key, num_steps))

    start = time.perf_counter()
    states, (rewards, dones) = jax.block_until_ready(rollout(states, jax.random.key(2)))
    print(
        f"{num_envs} envs x {num_steps} steps in {time.perf_counter() - start:.2f}s (with "
        f"compilation): mean return {float(rewards.sum(0).mean()):+.3f}, "
        f"finished {int(dones[-1].sum())}, solved {int(states.success.sum())}"
    )

    # 3. the gymnax interface: env.reset / env.step with auto-reset
    env, params = jaxarc.make("ARC-AGI-1", selection_format="point", max_episode_steps=20)
    obs, env_state = env.reset(jax.random.key(3), params)
    action = env.action_space(params).sample(jax.random.key(4))
    obs, env_state, reward, terminated, truncated, info = env.step(
        jax.random.key(5), env_state, action, params
    )
    print(
        f"gymnax step: {ops.OPERATION_NAMES[int(action.operation)]} -> reward "
        f"{float(reward):+.3f}, terminated {bool(terminated)}, truncated {bool(truncated)}"
    )


if __name__ == "__main__":
    main()
