"""The single Gymnasium environment: check_env, spaces, reset options, rendering."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gym_helpers import CANVAS, SMALL_ID, SMALL_NAME, TASKS
from gymnasium.utils.env_checker import check_env

from jaxarc.grid import operation_ids as ops
from jaxarc.gym import ArcGymnasiumEnv, gymnasium_id, register_gymnasium_envs
from jaxarc.render import ARC_PALETTE, PADDING_RGB


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_check_env_passes_without_warnings(fmt):
    env = gymnasium.make(SMALL_ID, selection_format=fmt, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any Gymnasium warning fails the test
        check_env(env.unwrapped, skip_render_check=False)
    expected = {
        "point": {"operation", "row", "col"},
        "bbox": {"operation", "r1", "c1", "r2", "c2"},
        "mask": {"operation", "selection"},
    }[fmt]
    assert set(env.action_space.spaces) == expected
    assert env.action_space["operation"].n == ops.NUM_OPERATIONS
    if fmt == "mask":
        assert isinstance(env.action_space["selection"], gymnasium.spaces.MultiBinary)
        assert env.action_space["selection"].shape == CANVAS


def test_registered_ids_cover_every_name_and_build_lazily():
    ids = register_gymnasium_envs()
    import jaxarc

    for name in jaxarc.registered_names():
        assert gymnasium_id(name) in ids
        spec = gymnasium.spec(gymnasium_id(name))
        assert spec.kwargs["env_name"] == name and isinstance(spec.entry_point, str)
    assert gymnasium_id("gen/easy") == "jaxarc/Gen-Easy-v0"
    assert "jaxarc/ARC-AGI-1-v0" in ids


def test_arc_agi_1_by_gymnasium_make_plays_the_chosen_task():
    """The real registered id: reset only (the step is covered on the small env)."""
    env = gymnasium.make("jaxarc/ARC-AGI-1-v0", selection_format="point")
    obs, info = env.reset(seed=1, options={"task_id": "007bbfb7", "pair": 2})
    assert info["task_id"] == "007bbfb7" and info["pair"] == 2
    assert env.observation_space.contains(obs)
    assert obs["grid"].shape == (30, 30) and obs["demo_inputs"].shape[1:] == (30, 30)


def test_reset_options_seeds_and_errors():
    env = gymnasium.make(SMALL_ID)
    for task_id in TASKS:
        for pair, demo in enumerate(TASKS[task_id]["train"]):
            obs, info = env.reset(options={"task_id": task_id, "pair": pair})
            assert (info["task_id"], info["pair"]) == (task_id, pair)
            rows, cols = np.shape(demo["input"])
            np.testing.assert_array_equal(obs["input_grid"][:rows, :cols], demo["input"])
            np.testing.assert_array_equal(obs["grid"], obs["input_grid"])
            assert (obs["input_grid"][rows:] == -1).all() and (
                obs["input_grid"][:, cols:] == -1
            ).all()
    first, _ = env.reset(seed=5)
    again, _ = env.reset(seed=5)
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
    with pytest.raises(ValueError, match="unknown task id 'nope'"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"level": 3})


def test_submit_terminates_and_success_is_reported():
    env = gymnasium.make(SMALL_ID, selection_format="mask", max_episode_steps=5)
    obs, _ = env.reset(seed=0, options={"task_id": "recolour", "pair": 0})
    ones = obs["grid"] == 1
    obs, _, terminated, _, _ = env.step(
        {"operation": ops.FILL_0 + 2, "selection": ones.astype(np.int8)}
    )
    assert not terminated and (obs["grid"][ones] == 2).all()
    _, reward, terminated, truncated, info = env.step(
        {"operation": ops.SUBMIT, "selection": np.zeros(CANVAS, np.int8)}
    )
    assert terminated and not truncated and info["success"] and reward > 0.5


def test_truncation_at_the_episode_length():
    env = ArcGymnasiumEnv(SMALL_NAME, max_episode_steps=3)  # the environment's own limit
    assert env.config.environment.max_episode_steps == 3
    env.reset(seed=0)
    flags = [env.step({"operation": ops.CLEAR, "row": 0, "col": 0})[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    limited = gymnasium.make(SMALL_ID, max_episode_steps=2)  # Gymnasium's TimeLimit
    limited.reset(seed=0)
    flags = [limited.step({"operation": ops.CLEAR, "row": 0, "col": 0})[2:4] for _ in range(2)]
    assert flags == [(False, False), (False, True)]
    with pytest.warns(DeprecationWarning, match="episode_steps is deprecated"):
        old_name = ArcGymnasiumEnv(SMALL_NAME, episode_steps=3)
    assert old_name.config.environment.max_episode_steps == 3
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(TypeError, match="max_episode_steps only"),
    ):
        ArcGymnasiumEnv(SMALL_NAME, episode_steps=3, max_episode_steps=3)


def test_render_modes_draw_the_working_grid():
    env = gymnasium.make(SMALL_ID, render_mode="rgb_array", cell_size=6)
    obs, _ = env.reset(seed=0, options={"task_id": "grow", "pair": 1})
    env.step({"operation": ops.FILL_0 + 7, "row": 0, "col": 0})
    frame = env.render()
    assert frame.shape == (CANVAS[0] * 6, CANVAS[1] * 6, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame[1, 3], [255, 255, 255])  # selection outline of (0, 0)
    np.testing.assert_array_equal(frame[3, 3], ARC_PALETTE[7])  # its centre: the new colour
    np.testing.assert_array_equal(frame[2 * 6 + 3, 2 * 6 + 3], PADDING_RGB)  # outside 1x1 grid
    text = gymnasium.make(SMALL_ID, render_mode="ansi")
    text.reset(seed=0, options={"task_id": "grow", "pair": 1})
    out = text.render()
    assert out.startswith("step 0") and "\x1b[48;2;255;220;0m" in out  # yellow 4


def test_human_render_mode_is_refused_clearly():
    for make in (
        lambda: gymnasium.make(SMALL_ID, render_mode="human"),
        lambda: ArcGymnasiumEnv(SMALL_NAME, render_mode="human"),
    ):
        with pytest.raises(ValueError, match="render_mode='human' is not supported"):
            make()


def test_bad_actions_are_named():
    env = gymnasium.make(SMALL_ID, selection_format="bbox")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"missing key\(s\) \['r2', 'c2'\]"):
        env.step({"operation": 0, "r1": 0, "c1": 0})
