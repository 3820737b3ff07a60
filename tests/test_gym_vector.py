"""The Gymnasium vector env: parity with batch_reset/batch_step, autoreset modes, one compile."""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
import pytest
from gym_helpers import CANVAS, SMALL_ID, SMALL_NAME
from gymnasium.vector import AutoresetMode

from jaxarc.envs import PointAction, batch_reset, batch_step
from jaxarc.grid import operation_ids as ops
from jaxarc.gym import ArcGymnasiumVectorEnv, observation_to_numpy

NUM_ENVS = 4
MAX_STEPS = 4


def make_vec(mode="next_step", **kwargs) -> ArcGymnasiumVectorEnv:
    return ArcGymnasiumVectorEnv(
        SMALL_NAME, NUM_ENVS, autoreset_mode=mode, max_episode_steps=MAX_STEPS, **kwargs
    )


def random_actions(rng: np.random.Generator) -> dict[str, np.ndarray]:
    # operations weighted towards SUBMIT so episodes end at different steps
    operation = np.where(
        rng.random(NUM_ENVS) < 0.3, ops.SUBMIT, rng.integers(0, ops.NUM_OPERATIONS, NUM_ENVS)
    )
    return {
        "operation": operation.astype(np.int64),
        "row": rng.integers(0, CANVAS[0], NUM_ENVS),
        "col": rng.integers(0, CANVAS[1], NUM_ENVS),
    }


def assert_obs_equal(gym_obs, jax_obs, rows=slice(None)):
    expected = observation_to_numpy(jax.device_get(jax_obs))
    assert set(gym_obs) == set(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(gym_obs[key][rows], value[rows], err_msg=key)


def test_same_seeds_and_actions_give_the_jax_trajectory():
    venv = make_vec()
    obs, info = venv.reset(seed=11)
    keys = jax.random.split(jax.random.key(11), NUM_ENVS)
    states, jax_obs = batch_reset(keys, venv.config, venv.backend.source)
    assert_obs_equal(obs, jax_obs)
    assert venv.observation_space.contains(obs)
    np.testing.assert_array_equal(info["task_index"], np.asarray(states.task_index))
    rng = np.random.default_rng(0)
    live = np.ones(NUM_ENVS, bool)
    compared = 0
    for _ in range(MAX_STEPS):
        actions = random_actions(rng)
        obs, reward, terminated, truncated, info = venv.step(actions)
        structured = PointAction(actions["operation"], actions["row"], actions["col"])
        states, jax_obs, jax_reward, _, jax_info = batch_step(states, structured, venv.config)
        rows = np.flatnonzero(live)  # environments whose episode has not ended before
        assert_obs_equal(obs, jax_obs, rows)
        np.testing.assert_allclose(reward[rows], np.asarray(jax_reward)[rows])
        np.testing.assert_array_equal(terminated[rows], np.asarray(jax_info["terminated"])[rows])
        np.testing.assert_array_equal(truncated[rows], np.asarray(jax_info["truncated"])[rows])
        np.testing.assert_allclose(
            info["similarity"][rows], np.asarray(jax_info["similarity"])[rows]
        )
        compared += len(rows)
        live &= ~(terminated | truncated)
    assert compared > NUM_ENVS and not live.any()  # every episode ended by MAX_STEPS


def test_next_step_autoreset_returns_a_fresh_episode_after_the_end():
    venv = make_vec("next_step")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    venv.reset(seed=0)
    submit = {
        "operation": np.full(NUM_ENVS, ops.SUBMIT),
        "row": np.zeros(NUM_ENVS, int),
        "col": np.zeros(NUM_ENVS, int),
    }
    obs, _, terminated, _, info = venv.step(submit)
    assert terminated.all() and (info["step_count"] == 1).all()
    fill = {**submit, "operation": np.full(NUM_ENVS, ops.CLEAR)}
    obs, reward, terminated, truncated, info = venv.step(fill)  # the action is ignored
    assert (reward == 0).all() and not terminated.any() and not truncated.any()
    assert (obs["step_count"] == 0).all()
    np.testing.assert_array_equal(obs["grid"], obs["input_grid"])
    obs, _, _, _, info = venv.step(fill)
    assert (info["step_count"] == 1).all()


def test_same_step_autoreset_keeps_the_final_observation():
    venv = make_vec("same_step")
    venv.reset(seed=2)
    keys = jax.random.split(jax.random.key(2), NUM_ENVS)
    states, _ = batch_reset(keys, venv.config, venv.backend.source)
    ending = np.array([True, False, True, False])
    operation = np.where(ending, ops.SUBMIT, ops.FILL_0 + 3)
    actions = {
        "operation": operation,
        "row": np.zeros(NUM_ENVS, int),
        "col": np.zeros(NUM_ENVS, int),
    }
    obs, _, terminated, _, info = venv.step(actions)
    zeros = np.zeros(NUM_ENVS, int)
    _, jax_obs, _, _, _ = batch_step(states, PointAction(operation, zeros, zeros), venv.config)
    np.testing.assert_array_equal(terminated, ending)
    np.testing.assert_array_equal(info["_final_obs"], ending)
    expected = observation_to_numpy(jax.device_get(jax_obs))
    for i in range(NUM_ENVS):
        if ending[i]:
            for key, value in expected.items():
                np.testing.assert_array_equal(info["final_obs"][i][key], value[i])
            assert obs["step_count"][i] == 0  # already the next episode
        else:
            assert info["final_obs"][i] is None and obs["step_count"][i] == 1


def test_disabled_autoreset_needs_masked_resets():
    venv = make_vec("disabled")
    first, _ = venv.reset(seed=4)
    actions = {
        "operation": np.array([ops.SUBMIT, ops.FILL_0 + 1, ops.FILL_0 + 1, ops.FILL_0 + 1]),
        "row": np.zeros(NUM_ENVS, int),
        "col": np.zeros(NUM_ENVS, int),
    }
    after, *_ = venv.step(actions)
    with pytest.raises(RuntimeError, match=r"environments \[0\] ended"):
        venv.step(actions)
    mask = np.array([True, False, False, False])
    obs, _ = venv.reset(seed=9, options={"reset_mask": mask})
    assert obs["step_count"][0] == 0
    for key in obs:  # unmasked environments are untouched
        np.testing.assert_array_equal(obs[key][1:], after[key][1:])
    venv.step(actions)


def test_one_compilation_for_many_steps(count_compilations):
    venv = make_vec()
    venv.reset(seed=0)
    rng = np.random.default_rng(1)
    venv.step(random_actions(rng))
    with count_compilations() as counter:
        for _ in range(6):
            venv.step(random_actions(rng))
    assert counter.programs == 0


def test_make_vec_uses_the_batched_entry_point():
    venv = gymnasium.make_vec(SMALL_ID, num_envs=3, selection_format="bbox")
    assert isinstance(venv, ArcGymnasiumVectorEnv) and venv.num_envs == 3
    obs, _ = venv.reset(seed=0)
    assert obs["grid"].shape == (3, *CANVAS)
    obs, reward, *_ = venv.step(venv.action_space.sample())
    assert reward.shape == (3,) and venv.observation_space.contains(obs)
    frames = gymnasium.make_vec(SMALL_ID, 3, selection_format="bbox", render_mode="rgb_array")
    frames.reset(seed=0)
    assert len(frames.render()) == 3
    assert frames.render_thumbnails().ndim == 3
    with pytest.raises(ValueError, match="seed must be one int"):
        venv.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="unknown autoreset_mode"):
        make_vec("sometimes")
