"""Off-the-shelf gymnax-style code on jaxarc: the one-call flat env, operation names, the
five-value adapter (deep-copy safe), and rejax's unmodified PPO training through it."""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gym_helpers import CANVAS, SMALL_NAME
from gymnax.environments import spaces

import jaxarc
from jaxarc.grid import operation_ids as ops
from jaxarc.wrappers import GymnaxV0Wrapper, MultiDiscrete

OPERATIONS = ["FLOOD_1", "SUBMIT"]
MAX_STEPS = 4


def test_make_takes_operation_names_like_ids():
    by_name, _ = jaxarc.make(SMALL_NAME, allowed_operations=["flood_1", "SUBMIT"])
    by_id, _ = jaxarc.make(SMALL_NAME, allowed_operations=[ops.SUBMIT, ops.FLOOD_0 + 1])
    assert by_name.config == by_id.config
    assert by_name.config.action.allowed_operations == (ops.FLOOD_0 + 1, ops.SUBMIT)
    assert by_name.action_space().allowed_operations == (ops.FLOOD_0 + 1, ops.SUBMIT)
    with pytest.raises(ValueError, match="unknown operation 'FLOOD_X'"):
        jaxarc.make(SMALL_NAME, allowed_operations=["FLOOD_X"])


@pytest.fixture(scope="module")
def flat():
    return jaxarc.make_flat(SMALL_NAME, allowed_operations=OPERATIONS, max_episode_steps=MAX_STEPS)


def test_make_flat_is_discrete_over_allowed_operations_with_a_box_observation(flat):
    env, params = flat
    height, width = CANVAS
    space = env.action_space(params)
    assert isinstance(space, spaces.Discrete) and space.n == len(OPERATIONS) * height * width
    obs_space = env.observation_space(params)
    assert isinstance(obs_space, spaces.Box) and obs_space.shape == (2 * height * width,)
    obs, state = env.reset(jax.random.key(0), params)
    assert obs.shape == obs_space.shape and obs.dtype == jnp.float32
    # the last slot is SUBMIT: any of its cells ends the episode at once
    submit = env.flat_index(ops.SUBMIT, 2, 3)
    assert submit == height * width + 2 * width + 3
    _, _, _, terminated, _, _ = env.step(jax.random.key(1), state, submit, params)
    assert bool(terminated)
    # the first slot is FLOOD_1 at (0, 0): it paints the working grid's cell, never submits
    obs2, _, _, terminated, _, _ = env.step(jax.random.key(1), state, 0, params)
    assert not bool(terminated) and obs2[0] == 1.0


def test_make_flat_multi_discrete_option():
    env, params = jaxarc.make_flat(
        SMALL_NAME, allowed_operations=OPERATIONS, action_format="multi_discrete", fields=["grid"]
    )
    space = env.action_space(params)
    assert isinstance(space, MultiDiscrete) and space.nvec == (2, *CANVAS)
    samples = jax.vmap(space.sample)(jax.random.split(jax.random.key(0), 64))
    assert bool(jax.vmap(space.contains)(samples).all())
    assert set(np.unique(np.asarray(samples[:, 0]))) == {0, 1}
    assert env.observation_space(params).shape == (CANVAS[0] * CANVAS[1],)
    _, state = env.reset(jax.random.key(0), params)
    out = env.step(jax.random.key(1), state, jnp.array([1, 0, 0], jnp.int32), params)
    assert bool(out[3])  # slot 1 is SUBMIT
    with pytest.raises(ValueError, match="point actions"):
        jaxarc.make_flat(SMALL_NAME, selection_format="bbox")


def test_gymnax_v0_wrapper_steps_with_five_values_and_survives_deepcopy(flat):
    env, params = flat
    legacy = GymnaxV0Wrapper(env)
    clone = copy.deepcopy(legacy)  # rejax deep-copies its config, env included
    assert clone.action_space(params).n == legacy.action_space(params).n
    assert clone.flat_index(ops.SUBMIT, 0, 0) == env.flat_index(ops.SUBMIT, 0, 0)
    for wrapped in (legacy, clone):
        obs, state = wrapped.reset(jax.random.key(0), params)
        submit = env.flat_index(ops.SUBMIT, 0, 0)
        out = wrapped.step(jax.random.key(1), state, submit, params)
        assert len(out) == 5
        next_obs, _, reward, done, info = out
        assert bool(done) and bool(info["terminated"]) and not bool(info["truncated"])
        assert float(info["discount"]) == 0.0
        assert info["final_observation"].shape == obs.shape
    # over gymnax's own CartPole too (any gymnax 1.0 environment)
    import gymnax

    cartpole, cp_params = gymnax.make("CartPole-v1")
    legacy_cp = copy.deepcopy(GymnaxV0Wrapper(cartpole, keep_final_observation=False))
    with jax.numpy_dtype_promotion("standard"):  # gymnax's CartPole mixes dtypes
        _, cp_state = legacy_cp.reset(jax.random.key(0), cp_params)
        out = legacy_cp.step(jax.random.key(1), cp_state, 0, cp_params)
    assert len(out) == 5 and "final_observation" not in out[4]


def test_rejax_ppo_trains_unmodified_through_the_adapter():
    """rejax 0.1.3's PPO, as published, on the flat env: only the env lines are ours."""
    from rejax import PPO

    env, env_params = jaxarc.make_flat(
        SMALL_NAME, allowed_operations=OPERATIONS, max_episode_steps=MAX_STEPS, gymnax_v0=True
    )
    num_envs, num_steps, updates = 4, 8, 3
    algo = PPO.create(
        env=env,
        env_params=env_params,
        num_envs=num_envs,
        num_steps=num_steps,
        num_epochs=1,
        num_minibatches=2,
        total_timesteps=num_envs * num_steps * updates,
        eval_freq=num_envs * num_steps * updates,
        skip_initial_evaluation=True,
        agent_kwargs={"hidden_layer_sizes": (16,)},
    )
    untrained = algo.init_state(jax.random.key(0))
    with jax.numpy_dtype_promotion("standard"):  # rejax's own arithmetic mixes dtypes
        train_state, (lengths, returns) = jax.jit(algo.train)(jax.random.key(0))
    assert int(train_state.global_step) == num_envs * num_steps * updates
    moved = jax.tree.map(
        lambda a, b: bool(jnp.any(a != b)),
        untrained.actor_ts.params,
        train_state.actor_ts.params,
    )
    assert any(jax.tree.leaves(moved))  # the actor was updated
    # rejax's evaluate.py ran whole episodes through the five-value step
    assert lengths.shape == returns.shape == (1, 128)
    assert bool(((lengths >= 1) & (lengths <= MAX_STEPS)).all())
