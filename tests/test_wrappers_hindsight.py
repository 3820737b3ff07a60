"""HindsightTaskWrapper: after an episode that changed the grid, the next episode may be its
hindsight task, which the episode's own actions solve, through the gymnax face and the flat
wrappers above it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxarc
from jaxarc.envs.hindsight import replay_actions
from jaxarc.envs.structured_actions import PointAction
from jaxarc.grid.operation_ids import FLOOD_0, SUBMIT
from jaxarc.wrappers import HindsightTaskWrapper, make_flat

EDITS = [PointAction(FLOOD_0 + 3, 0, 0), PointAction(FLOOD_0 + 5, 2, 1)]


def _env(probability: float):
    env, params = jaxarc.make("gen/ladder-4", max_episode_steps=4)
    return HindsightTaskWrapper(env, probability), params


def _play(env, params, state, actions, key=0):
    step = jax.jit(env.step)
    out = []
    for k, action in enumerate(actions):
        obs, state, reward, terminated, truncated, info = step(
            jax.random.key(key * 100 + k), state, action, params
        )
        out.append((obs, float(reward), bool(terminated), bool(truncated), info))
    return state, out


def test_an_episode_is_followed_by_its_hindsight_task_which_its_actions_solve():
    env, params = _env(1.0)
    obs, state = jax.jit(env.reset)(jax.random.key(1), params)
    first_input, first_demos = obs.input_grid, obs.demo_inputs
    state, steps = _play(env, params, state, [*EDITS, PointAction(SUBMIT, 0, 0)])
    final_grid = steps[-1][4]["final_observation"].grid
    obs, _, terminated, _, info = steps[-1]
    assert terminated and bool(info["hindsight"])
    assert not bool(info["success"])  # the fresh task was not solved by these floods
    # the next episode: same input and demonstration inputs, outputs replayed
    np.testing.assert_array_equal(obs.input_grid, first_input)
    np.testing.assert_array_equal(obs.grid, first_input)
    np.testing.assert_array_equal(obs.demo_inputs, first_demos)
    actions = jax.tree.map(lambda *x: jnp.stack(x), *EDITS)
    config = env.unwrapped.config
    for slot in np.flatnonzero(np.asarray(obs.demo_mask)):
        replayed, _ = replay_actions(
            obs.demo_inputs[slot], obs.demo_input_shapes[slot], actions, jnp.ones(2, bool), config
        )
        np.testing.assert_array_equal(obs.demo_outputs[slot], replayed)
    assert np.any(np.asarray(obs.demo_outputs) != np.asarray(obs.demo_inputs))
    # the same actions solve it, with the environment's reward
    state, steps = _play(env, params, state, [*EDITS, PointAction(SUBMIT, 0, 0)], key=1)
    obs, reward, terminated, _, info = steps[-1]
    assert terminated and bool(info["success"]) and reward > 0.9
    np.testing.assert_array_equal(steps[-1][4]["final_observation"].grid, final_grid)
    assert not bool(info["hindsight"])  # a hindsight episode is followed by a fresh task
    assert not np.array_equal(np.asarray(obs.input_grid), np.asarray(first_input))


def test_an_unchanged_episode_and_probability_zero_give_fresh_tasks():
    for probability, actions in ((1.0, [PointAction(SUBMIT, 0, 0)]), (0.0, [*EDITS] * 2)):
        env, params = _env(probability)
        obs, state = env.reset(jax.random.key(2), params)
        _, steps = _play(env, params, state, actions)
        assert steps[-1][2] or steps[-1][3]  # the episode ended
        assert not bool(steps[-1][4]["hindsight"])
        assert not np.array_equal(np.asarray(steps[-1][0].input_grid), np.asarray(obs.input_grid))


def test_the_flat_face_with_hindsight_runs_vmapped_under_jit():
    env, params = make_flat(
        "gen/ladder-2",
        allowed_operations=["FILL_1", "FILL_2", "SUBMIT"],
        fields=("grid", "input_grid", "demo_inputs", "demo_outputs"),
        max_episode_steps=4,
        hindsight=1.0,
    )
    batch = 16
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(jax.random.key(0), batch), params
    )
    assert obs.shape == (batch, *env.observation_space(params).shape)

    @jax.jit
    def rollout(state, key):
        def body(state, key):
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (batch,), 0, env.action_space(params).n)
            obs, state, reward, terminated, truncated, info = jax.vmap(
                env.step, in_axes=(0, 0, 0, None)
            )(jax.random.split(step_key, batch), state, actions, params)
            return state, (info["hindsight"], info["success"], terminated | truncated)

        return jax.lax.scan(body, state, jax.random.split(key, 32))

    _, (hindsight, success, done) = rollout(state, jax.random.key(1))
    assert np.asarray(done).sum() > batch  # several episodes per environment
    assert np.asarray(hindsight).any()  # some episodes were hindsight tasks


def test_bad_arguments_are_refused():
    env, _ = jaxarc.make("gen/ladder-1")
    with pytest.raises(
        ValueError, match=r"probability of HindsightTaskWrapper must be in \[0, 1\]"
    ):
        HindsightTaskWrapper(env, 1.5)
    with pytest.raises(TypeError, match=r"probability of HindsightTaskWrapper must be a number"):
        HindsightTaskWrapper(env, "0.5")
    with pytest.raises(TypeError, match="must be a number"):
        HindsightTaskWrapper(env, np.array([0.5]))  # one probability, not an array of them
    with pytest.raises(TypeError, match="wraps a jaxarc environment"):
        HindsightTaskWrapper(make_flat("gen/ladder-1")[0], 0.5)


def _hindsight_wrappers(env) -> list[HindsightTaskWrapper]:
    """The HindsightTaskWrappers in a stack of wrappers (each holds the next in ``env``)."""
    found = []
    while env is not None:
        if isinstance(env, HindsightTaskWrapper):
            found.append(env)
        env = getattr(env, "env", None)
    return found


@pytest.mark.parametrize("empty", ["", [], ()])
def test_make_flat_refuses_an_empty_hindsight(empty):
    """old: an empty string or list was false, so hindsight was off without a word."""
    with pytest.raises(TypeError, match=r"hindsight of make_flat must be a number in \[0, 1\]"):
        make_flat("gen/ladder-1", hindsight=empty)


@pytest.mark.parametrize(
    "probability", [np.float32(0.5), jnp.float32(0.25), np.float64(1.0), np.int8(1), jnp.array(0.5)]
)
def test_make_flat_takes_numpy_and_jax_scalars_as_the_hindsight_probability(probability):
    """old: refused as "not a number"."""
    env, _ = make_flat("gen/ladder-1", hindsight=probability)
    (wrapper,) = _hindsight_wrappers(env)
    assert type(wrapper.probability) is float
    assert wrapper.probability == float(probability)
    env, _ = make_flat("gen/ladder-1", hindsight=np.float32(0.0))  # 0: off, of any kind
    assert _hindsight_wrappers(env) == []
