"""Steps/s of Stable-Baselines3 vector envs on jaxarc: ``DummyVecEnv`` vs ``ArcSB3VecEnv``.

    python benchmarks/sb3_vec_env.py [--env gen/easy] [--num-envs 8 64] [--steps 200]
        [--task-refresh 4] [--no-dummy]

Both take flat spaces (``flat=True``) and uniformly random actions (drawn up front) and run
SB3's ``VecEnv`` API (``step_async`` / ``step_wait``, autoreset included), which is what SB3
and SBX see. Compilation is excluded: each env is reset and stepped ``--warmup`` times first.
``--task-refresh`` is ``ArcSB3VecEnv``'s (generated sources: environments per reset that get
a newly generated task; 0 keeps the pool fixed); ``--no-dummy`` measures ``ArcSB3VecEnv``
alone.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv

import jaxarc  # noqa: F401  (registers the ids)
from jaxarc.gym import gymnasium_id
from jaxarc.gym.sb3 import ArcSB3VecEnv


def steps_per_second(venv, steps: int, warmup: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    n = venv.action_space.n
    actions = rng.integers(0, n, size=(warmup + steps, venv.num_envs))
    venv.reset()
    for t in range(warmup):
        venv.step(actions[t])
    start = time.perf_counter()
    for t in range(warmup, warmup + steps):
        venv.step(actions[t])
    return steps * venv.num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="gen/easy")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--max-episode-steps", type=int, default=8)
    parser.add_argument("--task-refresh", type=int, default=None)
    parser.add_argument("--no-dummy", action="store_true", help="ArcSB3VecEnv only")
    args = parser.parse_args()
    options = {
        "max_episode_steps": args.max_episode_steps,
        "allowed_operations": ["FLOOD_1", "SUBMIT"],
    }
    env_id = gymnasium_id(args.env)
    print(f"{args.env}: env steps/s, random flat actions, episode length {args.max_episode_steps}")
    print("| num_envs | DummyVecEnv | ArcSB3VecEnv | ratio |\n|---|---|---|---|")
    refresh = {} if args.task_refresh is None else {"task_refresh": args.task_refresh}
    for num_envs in args.num_envs:
        batched = ArcSB3VecEnv(args.env, num_envs, **options, **refresh)
        fast = steps_per_second(batched, args.steps, args.warmup)
        if args.no_dummy:
            print(f"| {num_envs} | - | {fast:,.0f} | - |", flush=True)
            continue
        dummy = DummyVecEnv([lambda: gymnasium.make(env_id, flat=True, **options)] * num_envs)
        slow = steps_per_second(dummy, max(args.steps // num_envs, 5), args.warmup)
        print(f"| {num_envs} | {slow:,.0f} | {fast:,.0f} | {fast / slow:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
