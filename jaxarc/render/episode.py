"""Episodes as pictures: replay a state's action history, draw each action, save a GIF.

An :class:`EpisodeRecord` is a host-side (NumPy) account of one episode: the working grid
before every action and after the last, each action's operation and selection, rewards and
the outcome. :func:`replay_history` rebuilds it from a final :class:`~jaxarc.envs.types.ArcState`
(the state's action history is replayed from the episode's start); :func:`episode_frames`
draws it (selection outlined, operation named on every frame); :func:`save_episode_gif`
writes the animation. Records save to and load from ``.npz`` files (``jaxarc replay``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from jaxarc.grid.operation_ids import OPERATION_NAMES
from jaxarc.render.image_io import save_gif
from jaxarc.render.raster import BACKGROUND_RGB, draw_selection, render_rgb
from jaxarc.render.text import label_strip, stack


@dataclasses.dataclass(frozen=True)
class EpisodeRecord:
    """One episode, host-side. ``T`` actions on an ``H x W`` canvas.

    Attributes:
        grids: ``int8 [T+1, H, W]`` working grid before each action, then the final grid.
        grid_shapes: ``int32 [T+1, 2]`` active ``(rows, cols)`` of each grid.
        operations: ``int32 [T]`` operation ids.
        selections: ``bool [T, H, W]`` the cells each action selected.
        rewards: ``float32 [T]``.
        input_grid / input_shape: the episode's input.
        target_grid / target_shape: what a correct submission equals (for viewers only).
        task_id, pair_index, success: which pair was played and how it ended.
    """

    grids: np.ndarray
    grid_shapes: np.ndarray
    operations: np.ndarray
    selections: np.ndarray
    rewards: np.ndarray
    input_grid: np.ndarray
    input_shape: np.ndarray
    target_grid: np.ndarray
    target_shape: np.ndarray
    task_id: str = ""
    pair_index: int = 0
    success: bool = False

    def __post_init__(self) -> None:
        steps = len(self.operations)
        checks = {
            "grids": (self.grids.shape[0], steps + 1),
            "grid_shapes": (self.grid_shapes.shape[0], steps + 1),
            "selections": (self.selections.shape[0], steps),
            "rewards": (self.rewards.shape[0], steps),
        }
        for name, (got, want) in checks.items():
            if got != want:
                raise ValueError(f"EpisodeRecord.{name} has {got} rows, expected {want}")

    @property
    def num_steps(self) -> int:
        return len(self.operations)

    def save(self, path) -> Path:
        """Write the record as a compressed ``.npz`` file."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        with open(path, "wb") as handle:
            np.savez_compressed(handle, **{k: np.asarray(v) for k, v in fields.items()})
        return path

    @classmethod
    def load(cls, path) -> EpisodeRecord:
        """Read a record written by :meth:`save`; ``ValueError`` naming missing fields, or
        saying the file is not a complete ``.npz`` archive (a ``.npy``, text, empty or
        truncated file)."""
        import zipfile

        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path} is not a saved episode: not a complete .npz archive")
        with np.load(path, allow_pickle=False) as data:
            names = [f.name for f in dataclasses.fields(cls)]
            missing = [n for n in names if n not in data.files]
            if missing:
                raise ValueError(f"{path} is not a saved episode: missing {missing}")
            values = {n: data[n] for n in names}
        values["task_id"] = str(values["task_id"])
        values["pair_index"] = int(values["pair_index"])
        values["success"] = bool(values["success"])
        return cls(**values)


def replay_history(state, config, task_id: str = "") -> EpisodeRecord:
    """Rebuild the episode that led to ``state`` (one environment) from its action history.

    The episode's start is recreated with ``arc_reset`` on the same task and pair and every
    recorded action is stepped again, so the record's final grid equals ``state.grid``.
    Works for task banks (by index) and generated tasks (through the state's stored task).
    """
    import jax
    import jax.numpy as jnp

    from jaxarc.data.bank import TaskBank
    from jaxarc.envs.episode import episode_pair
    from jaxarc.envs.functional import arc_reset, arc_step
    from jaxarc.envs.structured_actions import action_class

    if np.ndim(state.step_count) != 0:
        raise ValueError(
            "replay_history takes one environment's state; index a batch first, e.g. "
            "jax.tree.map(lambda x: x[i], states)"
        )
    source = state.source
    task_index = int(state.task_index)
    pair_index = int(state.pair_index)
    if isinstance(source, TaskBank) and task_index >= 0:
        task_data, reset_index = source, task_index
        task_id = task_id or source.task_ids[task_index]
    else:
        task_data, reset_index = source.episode_task(state.episode_store, state.task_index), 0
    replayed, _ = arc_reset(
        jax.random.key(0), config, task_data, reset_index, pair_index, state.reward_params
    )
    task = replayed.source.episode_task(replayed.episode_store, replayed.task_index)
    pair = episode_pair(task, replayed.pair_index, config.environment.episode_mode)

    canvas = config.dataset.canvas_shape
    cls = action_class(config.action.selection_format)
    history = np.asarray(state.history)[: int(state.history_length)]
    grids, shapes = [np.asarray(replayed.grid)], [np.asarray(replayed.grid_shape)]
    operations, selections, rewards = [], [], []
    for row in history:
        action = cls.from_history(jnp.asarray(row), canvas)
        operations.append(int(action.operation))
        selections.append(np.asarray(action.to_selection_mask(canvas)))
        replayed, _, reward, _, _ = arc_step(replayed, action, config)
        rewards.append(float(reward))
        grids.append(np.asarray(replayed.grid))
        shapes.append(np.asarray(replayed.grid_shape))
    return EpisodeRecord(
        grids=np.stack(grids).astype(np.int8),
        grid_shapes=np.stack(shapes).astype(np.int32),
        operations=np.asarray(operations, dtype=np.int32),
        selections=np.asarray(selections, dtype=bool).reshape(-1, *canvas),
        rewards=np.asarray(rewards, dtype=np.float32),
        input_grid=np.asarray(pair.input_grid, dtype=np.int8),
        input_shape=np.asarray(pair.input_shape, dtype=np.int32),
        target_grid=np.asarray(pair.target_grid, dtype=np.int8),
        target_shape=np.asarray(pair.target_shape, dtype=np.int32),
        task_id=task_id,
        pair_index=pair_index,
        success=bool(replayed.success),
    )


def _operation_name(op: int) -> str:
    return OPERATION_NAMES[op] if 0 <= op < len(OPERATION_NAMES) else f"op {op}"


def episode_frames(
    record: EpisodeRecord,
    cell_size: int = 16,
    *,
    show_input: bool = True,
    show_target: bool = True,
    font_size: int = 12,
    caption: str | None = None,
) -> list[np.ndarray]:
    """One ``uint8 [h, w, 3]`` frame per action plus a final frame.

    Frame ``t`` shows the working grid before action ``t`` with the action's selection
    outlined in white and a header ``step t+1/T  OPERATION  reward``; the last frame shows
    the final grid and the outcome. The input and target are drawn alongside when asked.
    ``caption`` (e.g. who played the episode: "scripted solution") heads every frame.
    """
    panels_left, panels_right = [], []
    if show_input:
        panels_left.append(
            ("input", render_rgb(record.input_grid, cell_size, shape=record.input_shape))
        )
    if show_target:
        panels_right.append(
            ("target", render_rgb(record.target_grid, cell_size, shape=record.target_shape))
        )

    def frame(header: str, working: np.ndarray) -> np.ndarray:
        panels = [*panels_left, ("working grid", working), *panels_right]
        columns = []
        for title, image in panels:
            image = image if image.size else np.zeros((cell_size, cell_size, 3), np.uint8)
            columns.append(stack([label_strip(title, image.shape[1], font_size), image], 0, 2)[0])
        body = stack(columns, 1, max(8, cell_size), BACKGROUND_RGB)[0]
        strips = [label_strip(header, body.shape[1], font_size + 2), body]
        if caption:
            strips.insert(0, label_strip(caption, body.shape[1], font_size + 2))
        return stack(strips, 0, 4)[0]

    frames = []
    total = record.num_steps
    for t in range(total):
        # the grid's area, widened to reach selected cells beyond it (e.g. RESIZE to grow)
        selected = np.argwhere(record.selections[t])
        reach = selected.max(axis=0) + 1 if len(selected) else np.zeros(2, int)
        shape = np.maximum(record.grid_shapes[t], reach)
        working = render_rgb(record.grids[t], cell_size, shape=shape)
        selection = record.selections[t][: int(shape[0]), : int(shape[1])]
        working = draw_selection(working, selection, cell_size) if working.size else working
        name = _operation_name(int(record.operations[t]))
        frames.append(
            frame(f"step {t + 1}/{total}  {name}  reward {record.rewards[t]:+.2f}", working)
        )
    outcome = "solved" if record.success else "not solved"
    final = render_rgb(record.grids[total], cell_size, shape=record.grid_shapes[total])
    title = f"task {record.task_id} pair {record.pair_index}: " if record.task_id else ""
    frames.append(frame(f"{title}{outcome} after {total} steps", final))
    return frames


def save_episode_gif(
    record: EpisodeRecord, path, *, cell_size: int = 16, frame_ms: int = 600, **frame_kwargs
) -> Path:
    """Draw :func:`episode_frames` of ``record`` and save them as a looping GIF."""
    return save_gif(episode_frames(record, cell_size, **frame_kwargs), path, frame_ms=frame_ms)
