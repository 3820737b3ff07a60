"""An environment over your own task file (ARC JSON), played by hand, then via Gymnasium.

python examples/custom_task.py [--task-file my_task.json] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import jax
import numpy as np

from jaxarc.data import load_bank
from jaxarc.envs import PointAction, arc_reset, arc_step
from jaxarc.grid import operation_ids as ops
from jaxarc.gym import ArcGymnasiumEnv
from jaxarc.gymnax import build_environment
from jaxarc.render import to_text

# "colour the top-left cell red": a made-up task in the standard ARC JSON layout
EXAMPLE_TASK = {
    "train": [
        {"input": [[0, 0], [0, 0]], "output": [[2, 0], [0, 0]]},
        {"input": [[0, 1, 1], [1, 1, 1]], "output": [[2, 1, 1], [1, 1, 1]]},
    ],
    "test": [{"input": [[3, 3, 3]], "output": [[2, 3, 3]]}],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task-file", default=None, help="an ARC JSON task (default: made up)")
    parser.add_argument("--canvas", type=int, default=10, help="canvas side for the bank")
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.task_file) if args.task_file else Path(tmp) / "top_left_red.json"
        if args.task_file is None:
            path.write_text(json.dumps(EXAMPLE_TASK))
        bank = load_bank(path, canvas_shape=(args.canvas, args.canvas), use_cache=False)
    print(f"loaded {bank.num_tasks} task(s) from {path.name}: {list(bank.task_ids)}")

    env, params = build_environment(bank, name="custom", episode_mode="eval", max_episode_steps=5)
    state, obs = arc_reset(jax.random.key(0), env.config, bank, task_index=0, pair_index=0)
    print("test input:\n" + to_text(obs.grid, shape=obs.grid_shape))
    for action in (PointAction(ops.FILL_0 + 2, 0, 0), PointAction(ops.SUBMIT, 0, 0)):
        state, obs, reward, done, info = arc_step(state, action, env.config)
        print(f"{ops.OPERATION_NAMES[int(action.operation)]}: reward {float(reward):+.2f}")
    print("answer:\n" + to_text(obs.grid, shape=obs.grid_shape))
    print(f"solved: {bool(info['success'])}")

    gym_env = ArcGymnasiumEnv(jax_env=env, jax_params=params, render_mode="ansi")
    obs, info = gym_env.reset(seed=0, options={"task_index": 0, "pair": 0})
    obs, reward, terminated, truncated, info = gym_env.step(
        {"operation": ops.FILL_0 + 2, "row": 0, "col": 0}
    )
    obs, reward, terminated, truncated, info = gym_env.step(
        {"operation": ops.SUBMIT, "row": 0, "col": 0}
    )
    print(
        f"through Gymnasium: terminated {terminated}, success {info['success']}, "
        f"grid row 0 = {np.asarray(obs['grid'][0, :3]).tolist()}"
    )


if __name__ == "__main__":
    main()
