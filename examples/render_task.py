"""Rendering: a task sheet (PNG, SVG, terminal), batch thumbnails, and an episode GIF.

The episode is a scripted solution of a test pair (RESIZE to the answer's shape, one
mask-FILL per colour, SUBMIT), replayed from the final state's action history.

    python examples/render_task.py [--task-id 007bbfb7] [--out-dir renders] [--smoke]
    jaxarc replay renders/episode.npz --out renders/again.gif   # the saved episode
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import numpy as np

from jaxarc.data import load_bank
from jaxarc.envs import (
    EnvironmentConfig,
    JaxArcConfig,
    MaskAction,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    arc_reset,
    arc_step,
)
from jaxarc.grid import operation_ids as ops
from jaxarc.render import (
    render_batch,
    render_task_sheet,
    replay_history,
    save_episode_gif,
    save_png,
    to_ansi,
    to_svg,
)


def scripted_solution(target: np.ndarray, shape: np.ndarray, canvas) -> list[MaskAction]:
    """RESIZE to the target's shape, FILL each colour's cells, SUBMIT."""
    rows, cols = (int(v) for v in shape)
    corner = np.zeros(canvas, bool)
    corner[rows - 1, cols - 1] = True
    actions = [MaskAction(ops.RESIZE, corner)]
    inside = np.zeros(canvas, bool)
    inside[:rows, :cols] = True
    colours, counts = np.unique(target[inside], return_counts=True)
    for colour in colours[np.argsort(-counts)]:  # the most common colour first
        actions.append(MaskAction(ops.FILL_0 + int(colour), inside & (target == colour)))
    actions.append(MaskAction(ops.SUBMIT, corner))
    return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task-id", default="007bbfb7")
    parser.add_argument("--source", default="arc-agi-1/training")
    parser.add_argument("--out-dir", default="renders")
    parser.add_argument("--cell-size", type=int, default=16)
    parser.add_argument("--thumbnails", type=int, default=64, help="tasks in the thumbnail sheet")
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    if args.smoke:
        args.thumbnails, args.cell_size = 4, 6
    out = Path(args.out_dir)

    bank = load_bank(args.source)
    task = bank.task_by_id(args.task_id)
    sheet = render_task_sheet(task, args.task_id, cell_size=args.cell_size)
    print("wrote", save_png(sheet, out / f"{args.task_id}.png"), sheet.shape)
    (out / f"{args.task_id}_test0.svg").write_text(
        to_svg(task.test_inputs[0], args.cell_size, shape=task.test_input_shapes[0])
    )
    print(f"test input of {args.task_id}:")
    print(to_ansi(task.test_inputs[0], shape=task.test_input_shapes[0]))

    count = min(args.thumbnails, bank.num_tasks)
    thumbs = render_batch(
        bank.test_inputs[:count, 0],
        3,
        shapes=bank.test_input_shapes[:count, 0],
        columns=min(8, count),
    )
    print("wrote", save_png(thumbs, out / "thumbnails.png"), thumbs.shape)

    canvas = bank.canvas_shape
    config = JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=20, episode_mode="eval"),
        dataset=UnifiedDatasetConfig(*canvas),
        action=UnifiedActionConfig(selection_format="mask"),
    )
    index = bank.task_ids.index(args.task_id)
    state, _ = arc_reset(jax.random.key(0), config, bank, task_index=index, pair_index=0)
    target = np.asarray(task.test_outputs[0])
    for action in scripted_solution(target, np.asarray(task.test_output_shapes[0]), canvas):
        state, _, reward, done, info = arc_step(state, action, config)
    print(f"scripted episode: success {bool(state.success)} after {int(state.step_count)} steps")
    record = replay_history(state, config)
    print("wrote", record.save(out / "episode.npz"))
    caption = "a scripted solution (RESIZE, one FILL per colour, SUBMIT), not a trained agent"
    gif = save_episode_gif(record, out / "episode.gif", cell_size=args.cell_size, caption=caption)
    print("wrote", gif)


if __name__ == "__main__":
    main()
