"""Bytes of environment state per action format (the task bank is shared, not per env).

python examples/memory_efficiency.py [--num-envs 1024] [--smoke]
"""

from __future__ import annotations

import argparse

import jax

import jaxarc
from jaxarc.envs import batch_reset


def tree_bytes(tree) -> int:
    return sum(int(leaf.nbytes) for leaf in jax.tree.leaves(tree))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="ARC-AGI-1")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--max-episode-steps", type=int, default=100, help="history length")
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    if args.smoke:
        args.num_envs = 8

    print(f"{args.env}, {args.num_envs} environments, history of {args.max_episode_steps} steps")
    print(f"{'format':<7} {'state B/env':>12} {'history B/env':>14} {'obs B/env':>10}")
    bank_bytes = 0
    for fmt in ("point", "bbox", "mask"):
        env, _ = jaxarc.make(
            args.env, selection_format=fmt, max_episode_steps=args.max_episode_steps
        )
        keys = jax.random.split(jax.random.key(0), args.num_envs)
        states, obs = batch_reset(keys, env.config, env.task_source)
        per_env = tree_bytes(states) // args.num_envs
        history = int(states.history.nbytes) // args.num_envs
        print(f"{fmt:<7} {per_env:>12,} {history:>14,} {tree_bytes(obs) // args.num_envs:>10,}")
        bank_bytes = tree_bytes(env.task_source)
    print(f"task bank (shared by all environments, never copied): {bank_bytes / 2**20:.1f} MiB")
    print(
        "observations are built per step from the state and the shared bank; only the "
        "state persists between steps."
    )


if __name__ == "__main__":
    main()
