"""Hindsight tasks (jaxarc.envs.hindsight) agree with the environment's own step.

Replaying an episode's actions on a grid must give what stepping the environment gives on
that grid; re-scoring an episode against its own target must give the rewards it was paid.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.data.generators import make_generator
from jaxarc.envs import JaxArcConfig, arc_reset, arc_step
from jaxarc.envs.config import config_from_options
from jaxarc.envs.hindsight import (
    episode_hindsight_task,
    hindsight_outputs,
    replay_actions,
    rescore_steps,
)
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.envs.transition import effective_operation
from jaxarc.grid.operation_ids import NUM_OPERATIONS, SUBMIT

STEPS = 6
SOURCE = make_generator("gen/medium")  # 8x8 grids, four demonstration pairs, every family


def _config(fmt: str) -> tuple[JaxArcConfig, object]:
    return config_from_options(
        (8, 8), selection_format=fmt, max_episode_steps=STEPS, similarity_weight=1.0
    )


def _random_action(rng: np.random.Generator, fmt: str, step: int):
    """Any of the 35 operations (SUBMIT only from the third step, so episodes have edits)."""
    operation = int(rng.integers(NUM_OPERATIONS - 1)) if step < 2 else int(rng.integers(35))
    r1, c1, r2, c2 = (int(v) for v in rng.integers(0, 8, size=4))
    if fmt == "point":
        return PointAction(operation=operation, row=r1, col=c1)
    if fmt == "bbox":
        return BboxAction(operation=operation, r1=r1, c1=c1, r2=r2, c2=c2)
    return MaskAction(operation=operation, selection=rng.random((8, 8)) < 0.3)


def _episode(key, config, reward_params, actions, pair_index):
    """Play ``actions`` from a reset on ``pair_index``: observations, rewards, taken, state."""
    # a traced index: one compiled reset for every pair
    state, obs = arc_reset(
        key, config, SOURCE, pair_index=jnp.int32(pair_index), reward_params=reward_params
    )
    observations, rewards, taken = [], [], []
    for action in actions:
        taken.append(bool(~(state.terminated | state.truncated)))
        observations.append(obs)
        state, obs, reward, _, _ = arc_step(state, action, config)
        rewards.append(float(reward))
    return observations, np.array(rewards, np.float32), np.array(taken), state


def _stack(actions):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *actions)


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_replayed_actions_give_the_grids_the_steps_give(fmt):
    config, reward_params = _config(fmt)
    replay = jax.jit(lambda g, s, a, t: replay_actions(g, s, a, t, config))
    rng = np.random.default_rng(0)
    changed = 0
    for seed in range(6):
        actions = [_random_action(rng, fmt, t) for t in range(STEPS)]
        observations, _, taken, state = _episode(
            jax.random.key(seed), config, reward_params, actions, 0
        )
        grid, shape = replay(
            observations[0].input_grid, observations[0].input_shape, _stack(actions), taken
        )
        np.testing.assert_array_equal(grid, state.grid)
        np.testing.assert_array_equal(shape, state.grid_shape)
        changed += int(np.any(np.asarray(state.grid) != np.asarray(observations[0].input_grid)))
    assert changed >= 3  # the episodes edited their grids: the comparison is not vacuous


@pytest.mark.parametrize("fmt", ["bbox"])  # the rectangle form; point is a 1x1 rectangle
def test_hindsight_outputs_are_the_episodes_played_on_each_demonstration(fmt):
    config, reward_params = _config(fmt)
    rng = np.random.default_rng(1)
    key = jax.random.key(7)
    actions = [_random_action(rng, fmt, t) for t in range(STEPS)]
    observations, _, taken, _ = _episode(key, config, reward_params, actions, 0)
    first = observations[0]
    outputs, shapes = jax.jit(lambda i, s, m, a, t: hindsight_outputs(i, s, m, a, t, config))(
        first.demo_inputs, first.demo_input_shapes, first.demo_mask, _stack(actions), taken
    )
    shown = np.flatnonzero(np.asarray(first.demo_mask))
    assert list(shown) == [1, 2, 3]  # pair 0 is played, so hidden
    for slot in shown:
        # the same task (same key), pair ``slot`` played: its input is that demonstration's
        _, _, _, state = _episode(key, config, reward_params, actions, int(slot))
        np.testing.assert_array_equal(outputs[slot], state.grid)
        np.testing.assert_array_equal(shapes[slot], state.grid_shape)
    np.testing.assert_array_equal(outputs[0], np.full((8, 8), -1, np.int8))
    np.testing.assert_array_equal(shapes[0], [0, 0])


@pytest.mark.parametrize("fmt", ["point", "bbox"])
def test_rescoring_against_the_own_target_gives_the_rewards_paid(fmt):
    config, reward_params = _config(fmt)
    rescore = jax.jit(
        lambda g, s, o, t, tg, ts: rescore_steps(g, s, o, t, tg, ts, reward_params, config)
    )
    rng = np.random.default_rng(2)
    successes = 0
    for seed in range(8):
        key = jax.random.key(100 + seed)
        # half the episodes play the target's solution found by replay: copy it with SUBMIT
        actions = [_random_action(rng, fmt, t) for t in range(STEPS)]
        if seed % 2:
            actions[2] = (
                PointAction(SUBMIT, 0, 0) if fmt == "point" else BboxAction(SUBMIT, 0, 0, 0, 0)
            )
        observations, rewards, taken, state = _episode(key, config, reward_params, actions, 0)
        grids = jnp.stack([o.grid for o in observations] + [state.grid])
        shapes = jnp.stack([o.grid_shape for o in observations] + [state.grid_shape])
        operations = jnp.stack(
            [
                effective_operation(a.operation, jnp.asarray(t), config)
                for a, t in zip(actions, taken, strict=True)
            ]
        )
        target = state.pair
        got, success = rescore(
            grids, shapes, operations, jnp.asarray(taken), target.target_grid, target.target_shape
        )
        np.testing.assert_allclose(got, rewards, atol=1e-6)
        assert bool(success) == bool(state.success)
        # against the grid the episode reached, a submitted episode succeeds
        reached, reached_success = rescore(
            grids, shapes, operations, jnp.asarray(taken), state.grid, state.grid_shape
        )
        submitted = bool(np.any(np.asarray(operations) == SUBMIT))
        assert bool(reached_success) == submitted
        successes += int(reached_success)
        assert np.all(np.asarray(reached)[~taken] == 0.0)
    assert successes >= 4


# -- through the faces: an episode's hindsight task is solved by replaying its actions

BBOX_EDITS = [  # whole-grid and partial edits, no SUBMIT
    {"operation": 12, "r1": 0, "c1": 0, "r2": 7, "c2": 7},  # FLOOD_2 at the top-left cell
    {"operation": 30, "r1": 1, "c1": 0, "r2": 3, "c2": 4},  # FLIP_LR of a rectangle
    {"operation": 4, "r1": 2, "c1": 2, "r2": 2, "c2": 2},  # FILL_4 one cell
]
SUBMIT_ACTION = {"operation": SUBMIT, "r1": 0, "c1": 0, "r2": 0, "c2": 0}


def _solve_through_gymnasium(task):
    """Play BBOX_EDITS and SUBMIT on the task's test pair through the Gymnasium face."""
    from jaxarc.data.bank import TaskBank
    from jaxarc.gym.env import ArcGymnasiumEnv
    from jaxarc.gymnax.registry import build_environment

    jax_env, params = build_environment(
        TaskBank.from_single_task(task), episode_mode="eval", selection_format="bbox"
    )
    env = ArcGymnasiumEnv(jax_env=jax_env, jax_params=params)
    env.reset(seed=0)
    for action in BBOX_EDITS:
        env.step({k: np.int64(v) for k, v in action.items()})
    _, reward, terminated, _, info = env.step({k: np.int64(v) for k, v in SUBMIT_ACTION.items()})
    return bool(terminated), bool(info["success"]), float(reward)


def _check_hindsight_task(task):
    """The task's demonstrations show a change (it is not the identity task)."""
    shown = int(task.num_demos)
    assert shown == 3  # the played pair is hidden from the episode, so from its task
    inputs, outputs = np.asarray(task.demo_inputs[:shown]), np.asarray(task.demo_outputs[:shown])
    assert np.any(inputs != outputs)


def test_the_gymnasium_face_episode_hindsight_task_is_solved_by_its_actions():
    import gymnasium

    env = gymnasium.make("jaxarc/Gen-Medium-v0", selection_format="bbox")
    env.reset(seed=3)
    for action in BBOX_EDITS:
        env.step({k: np.int64(v) for k, v in action.items()})
    inner = env.unwrapped
    task = episode_hindsight_task(inner.state, inner.config)
    _check_hindsight_task(task)
    np.testing.assert_array_equal(task.test_outputs[0], inner.state.grid)
    terminated, success, reward = _solve_through_gymnasium(task)
    assert terminated and success and reward > 0.5


def test_the_gymnax_face_episode_hindsight_task_is_solved_by_its_actions():
    import jaxarc

    env, params = jaxarc.make("gen/medium", selection_format="bbox")
    _, state = env.reset(jax.random.key(3), params)
    for action in BBOX_EDITS:
        _, state, _, terminated, truncated, _ = env.step(
            jax.random.key(0), state, BboxAction(**action), params
        )
        assert not bool(terminated | truncated)  # before the auto-reset
    task = jax.jit(lambda s: episode_hindsight_task(s, env.config))(state)
    _check_hindsight_task(task)
    terminated, success, _ = _solve_through_gymnasium(task)
    assert terminated and success
