"""A random agent through Gymnasium: ``gymnasium.make`` and the batched ``make_vec``.

python examples/gymnasium_random_agent.py [--episodes 3] [--num-envs 256] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

from jaxarc.gym import register_gymnasium_envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-id", default="jaxarc/ARC-AGI-1-v0")
    parser.add_argument("--format", default="point", choices=("point", "bbox", "mask"))
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--max-episode-steps", type=int, default=30)
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--vector-steps", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.max_episode_steps, args.num_envs, args.vector_steps = 1, 5, 4, 6
    register_gymnasium_envs()  # `import jaxarc` does this too; calling again is harmless

    # one environment, the classic loop
    env = gymnasium.make(
        args.env_id,
        selection_format=args.format,
        max_episode_steps=args.max_episode_steps,  # gymnasium.make: Gymnasium's TimeLimit
        render_mode="ansi",
    )
    env.action_space.seed(0)
    for episode in range(args.episodes):
        obs, info = env.reset(seed=episode)
        episode_return, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            episode_return += reward
            done = terminated or truncated
        print(
            f"episode {episode}: task {info['task_id']} pair {info['pair']}, "
            f"{info['step_count']} steps, return {episode_return:+.3f}, "
            f"success {info['success']}"
        )
    print(env.render())

    # many environments, one batched jitted call per step (autoreset: next step)
    venv = gymnasium.make_vec(
        args.env_id,
        num_envs=args.num_envs,
        selection_format=args.format,
        max_episode_steps=args.max_episode_steps,
    )
    venv.action_space.seed(0)
    obs, info = venv.reset(seed=0)
    venv.step(venv.action_space.sample())  # compile
    finished, returns = 0, np.zeros(args.num_envs)
    start = time.perf_counter()
    for _ in range(args.vector_steps):
        obs, reward, terminated, truncated, info = venv.step(venv.action_space.sample())
        returns += reward
        finished += int(np.sum(terminated | truncated))
    seconds = time.perf_counter() - start
    print(
        f"vector env: {args.num_envs} envs x {args.vector_steps} steps in {seconds:.2f}s "
        f"({args.num_envs * args.vector_steps / seconds:,.0f} steps/s incl. host transfer), "
        f"{finished} episodes finished"
    )


if __name__ == "__main__":
    main()
