"""Episode records: replaying a state's history, frames with the action drawn, GIF, CLI."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.cli.main import main as cli_main
from jaxarc.data import bank_from_tasks
from jaxarc.envs import (
    EnvironmentConfig,
    JaxArcConfig,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    arc_reset,
    arc_step,
)
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.grid import operation_ids as ops
from jaxarc.render import (
    ARC_PALETTE,
    SELECTION_RGB,
    EpisodeRecord,
    episode_frames,
    load_gif_frames,
    load_png,
    render_task_sheet,
    replay_history,
    save_episode_gif,
)

CANVAS = (4, 4)
TASKS = {
    "flipper": {
        "train": [{"input": [[1, 0], [0, 0]], "output": [[1, 2], [0, 0]]}],
        "test": [{"input": [[3, 0]], "output": [[3, 2]]}],
    }
}


@pytest.fixture(scope="module")
def bank():
    return bank_from_tasks(TASKS, canvas_shape=CANVAS)


def config_for(fmt: str) -> JaxArcConfig:
    return JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=6),
        dataset=UnifiedDatasetConfig(*CANVAS),
        action=UnifiedActionConfig(selection_format=fmt),
    )


def actions_for(fmt: str):
    """FILL_5 on (1, 1), FILL_2 on (0, 1), SUBMIT: solves demo pair 0 except the 5 at (1, 1)."""
    cells = [(ops.FILL_0 + 5, 1, 1), (ops.FILL_0 + 2, 0, 1), (ops.SUBMIT, 0, 0)]
    if fmt == "point":
        return [PointAction(op, r, c) for op, r, c in cells]
    if fmt == "bbox":
        return [BboxAction(op, r, c, r, c) for op, r, c in cells]
    masks = []
    for op, r, c in cells:
        mask = np.zeros(CANVAS, bool)
        mask[r, c] = True
        masks.append(MaskAction(op, mask))
    return masks


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_replay_history_rebuilds_the_episode(bank, fmt):
    config = config_for(fmt)
    state, _ = arc_reset(jax.random.key(3), config, bank, 0, 0)
    grids, rewards = [np.asarray(state.grid)], []
    for action in actions_for(fmt):
        state, _, reward, _, _ = arc_step(state, action, config)
        grids.append(np.asarray(state.grid))
        rewards.append(float(reward))
    record = replay_history(state, config)
    assert record.task_id == "flipper" and record.pair_index == 0 and not record.success
    np.testing.assert_array_equal(record.grids, np.stack(grids))
    np.testing.assert_allclose(record.rewards, rewards)
    np.testing.assert_array_equal(record.operations, [ops.FILL_0 + 5, ops.FILL_0 + 2, ops.SUBMIT])
    expected_sel = np.zeros((3, *CANVAS), bool)
    expected_sel[0, 1, 1] = expected_sel[1, 0, 1] = expected_sel[2, 0, 0] = True
    np.testing.assert_array_equal(record.selections, expected_sel)
    np.testing.assert_array_equal(record.target_grid[:1, :2], [[1, 2]])


def test_replay_rejects_a_batch(bank):
    from jaxarc.envs import batch_reset

    config = config_for("point")
    states, _ = batch_reset(jax.random.split(jax.random.key(0), 2), config, bank)
    with pytest.raises(ValueError, match="one environment"):
        replay_history(states, config)


@pytest.fixture(scope="module")
def record(bank) -> EpisodeRecord:
    config = config_for("point")
    state, _ = arc_reset(jax.random.key(3), config, bank, 0, 0)
    for action in actions_for("point"):
        state, *_ = arc_step(state, action, config)
    return replay_history(state, config)


def test_frames_draw_the_selection_and_the_grid(record):
    cell = 10
    frames = episode_frames(record, cell, show_input=False, show_target=False)
    assert len(frames) == record.num_steps + 1
    plain = episode_frames(
        EpisodeRecord(**{**record.__dict__, "selections": np.zeros_like(record.selections)}),
        cell,
        show_input=False,
        show_target=False,
    )
    for t in range(record.num_steps):
        changed = np.any(frames[t] != plain[t], axis=-1)
        # the only change is the white outline, inside the selected cell's pixel block
        assert changed.any()
        np.testing.assert_array_equal(
            frames[t][changed], np.tile(SELECTION_RGB, (changed.sum(), 1))
        )
        rows, cols = np.nonzero(changed)
        r, c = np.argwhere(record.selections[t])[0]
        assert rows.max() - rows.min() == cell - 1 and cols.max() - cols.min() == cell - 1
        top, left = rows.min() - r * cell, cols.min() - c * cell  # the grid's origin
        centre = frames[t][top + r * cell + cell // 2, left + c * cell + cell // 2]
        np.testing.assert_array_equal(centre, ARC_PALETTE[record.grids[t][r, c]])
        # the header names the operation: frames of different operations differ above the grid
        assert top > 0
    assert not np.array_equal(frames[0][:12], frames[1][:12])


def test_record_round_trip_and_gif(tmp_path, record):
    path = record.save(tmp_path / "ep.npz")
    loaded = EpisodeRecord.load(path)
    for name, value in record.__dict__.items():
        np.testing.assert_array_equal(np.asarray(getattr(loaded, name)), np.asarray(value))
    gif = save_episode_gif(loaded, tmp_path / "ep.gif", cell_size=8)
    frames = load_gif_frames(gif)
    expected = episode_frames(loaded, 8)
    assert len(frames) == len(expected)
    np.testing.assert_array_equal(
        frames[0][: expected[0].shape[0], : expected[0].shape[1]], expected[0]
    )
    np.savez(tmp_path / "bad.npz", grids=np.zeros(1))
    with pytest.raises(ValueError, match="missing"):
        EpisodeRecord.load(tmp_path / "bad.npz")


def test_cli_replay_writes_the_gif(tmp_path, record, capsys):
    path = record.save(tmp_path / "ep.npz")
    assert (
        cli_main(["replay", str(path), "--out", str(tmp_path / "r.gif"), "--cell-size", "8"]) == 0
    )
    assert "3 steps, not solved" in capsys.readouterr().out
    frames = load_gif_frames(tmp_path / "r.gif")
    expected = episode_frames(record, 8)
    assert len(frames) == len(expected)
    last = expected[-1]
    np.testing.assert_array_equal(frames[-1][: last.shape[0], : last.shape[1]], last)
    assert cli_main(["replay", str(tmp_path / "missing.npz")]) == 2


def test_cli_render_task_png_colours(tmp_path, capsys):
    """``jaxarc render`` on the bundled ARC-AGI-1 set: the PNG's cells carry the task's colours."""
    from jaxarc.data import load_bank

    out = tmp_path / "task.png"
    argv = ["render", "007bbfb7", "--source", "arc-agi-1/training", "--out", str(out)]
    assert cli_main([*argv, "--cell-size", "6"]) == 0
    assert "wrote" in capsys.readouterr().out
    task = load_bank("arc-agi-1/training").task_by_id("007bbfb7")
    _, layout = render_task_sheet(task, "007bbfb7", cell_size=6, return_layout=True)
    image = load_png(out)
    for (kind, k, which), (top, left) in layout.items():
        grid = np.asarray(getattr(task, f"{kind}_{which}s")[k])
        rows, cols = np.asarray(getattr(task, f"{kind}_{which}_shapes")[k])
        for r in range(rows):
            for c in range(cols):
                pixel = image[top + r * 6 + 3, left + c * 6 + 3]
                np.testing.assert_array_equal(pixel, ARC_PALETTE[grid[r, c]])
    assert cli_main(["render", "nope0000", "--out", str(out)]) == 2
    assert "unknown task id" in capsys.readouterr().err
    assert cli_main(["render", "007bbfb7", "--format", "ansi"]) == 0
    assert "077\n777\n077" in capsys.readouterr().out  # captured, not a terminal: digits


def test_cli_replay_of_a_saved_state(tmp_path, capsys):
    """``jaxarc replay`` on a state file from ``save_state``: its history is replayed."""
    import json

    from jaxarc.data import load_bank
    from jaxarc.envs import batch_reset, batch_step
    from jaxarc.envs.serialization import save_state

    task_file = tmp_path / "tasks.json"
    task_file.write_text(json.dumps(TASKS))
    bank = load_bank(task_file, canvas_shape=CANVAS, use_cache=False)
    config = config_for("point")
    states, _ = batch_reset(jax.random.split(jax.random.key(0), 2), config, bank)
    for action in actions_for("point")[:2]:  # two fills, no submit
        batched = jax.tree.map(lambda x: jnp.stack([x, x]), action)
        states, *_ = batch_step(states, batched, config)
    path = save_state(tmp_path / "state.npz", states, config)
    out = tmp_path / "state.gif"
    argv = ["replay", str(path), "--source", str(task_file), "--env-index", "1"]
    assert cli_main([*argv, "--out", str(out), "--cell-size", "8"]) == 0
    assert "2 steps, not solved" in capsys.readouterr().out
    one = jax.tree.map(lambda x: x[1], states)
    expected = episode_frames(replay_history(one, config), 8)
    frames = load_gif_frames(out)
    assert len(frames) == 3
    last = expected[-1]
    np.testing.assert_array_equal(frames[-1][: last.shape[0], : last.shape[1]], last)
    assert cli_main([*argv[:-1], "7", "--out", str(out)]) == 2
    assert "outside the saved batch" in capsys.readouterr().err


def test_a_caption_heads_every_frame(record):
    plain = episode_frames(record, 8)
    captioned = episode_frames(record, 8, caption="scripted")
    assert len(captioned) == len(plain)
    height = captioned[0].shape[0] - plain[0].shape[0]
    assert height > 8
    for frame, without in zip(captioned, plain, strict=True):
        assert frame.shape[1] == without.shape[1]
        np.testing.assert_array_equal(frame[height:], without)  # the frame, under its caption
    # one caption on all (frames widen where a selection reaches past the grid, so the
    # strips are compared over the narrowest frame's width)
    narrowest = min(frame.shape[1] for frame in captioned)
    assert len({frame[:height, :narrowest].tobytes() for frame in captioned}) == 1
    assert len(np.unique(captioned[0][:height].reshape(-1, 3), axis=0)) > 1  # text, not blank
