"""The gymnax-compatible class, spaces, registry and state serialisation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnax.environments.environment import Environment

import jaxarc
from jaxarc.envs import JaxArcConfig, RewardParams, batch_reset, batch_step
from jaxarc.envs.serialization import load_state, save_state
from jaxarc.grid import operation_ids as ops
from jaxarc.gymnax import ArcEnvParams


@pytest.fixture(scope="module", params=["point", "bbox", "mask"])
def env_and_params(request):
    return jaxarc.make("ARC-AGI-1", selection_format=request.param, max_episode_steps=8)


def test_make_returns_a_gymnax_environment(env_and_params):
    env, params = env_and_params
    assert isinstance(env, Environment)
    assert isinstance(params, ArcEnvParams)
    assert env.num_actions == ops.NUM_OPERATIONS
    assert "ARC-AGI-1" in jaxarc.registered_names()


def test_random_episode_under_vmap_stays_in_spec(env_and_params):
    env, params = env_and_params
    space = env.action_space(params)
    obs_space = env.observation_space(params)
    batch = 16

    @jax.jit
    def rollout(key):
        reset_keys, key = jax.random.split(key)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(reset_keys, batch), params
        )

        def body(carry, key):
            obs, state = carry
            act_key, step_key = jax.random.split(key)
            action = jax.vmap(space.sample)(jax.random.split(act_key, batch))
            valid = jax.vmap(space.contains)(action)
            obs, state, reward, term, trunc, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, batch), state, action, params
            )
            in_spec = jax.vmap(obs_space.contains)(obs)
            return (obs, state), (reward, term, trunc, valid, in_spec)

        return jax.lax.scan(body, (obs, state), jax.random.split(key, 20))

    (obs, state), (reward, term, trunc, valid, in_spec) = rollout(jax.random.key(0))
    assert np.isfinite(np.asarray(reward)).all()
    assert np.asarray(valid).all() and np.asarray(in_spec).all()
    assert not (np.asarray(term) & np.asarray(trunc)).any()
    assert np.asarray(term | trunc).any()  # episodes ended and were auto-reset
    grid, shape = np.asarray(obs.grid), np.asarray(obs.grid_shape)
    rows = np.arange(grid.shape[1])[None, :, None] < shape[:, 0, None, None]
    cols = np.arange(grid.shape[2])[None, None, :] < shape[:, 1, None, None]
    inside = rows & cols
    assert ((grid >= 0) & (grid <= 9))[inside].all() and (grid == -1)[~inside].all()


def test_gymnax_step_reports_final_observation_and_uses_params():
    env, params = jaxarc.make("ARC-AGI-1", success_bonus=2.0, failed_submit_penalty=-7.0)
    obs, state = env.reset(jax.random.key(1), params)
    action = jaxarc.envs.PointAction(ops.SUBMIT, 0, 0)
    obs2, state2, reward, term, trunc, info = env.step(jax.random.key(2), state, action, params)
    assert bool(term) and not bool(trunc)
    assert float(reward) == pytest.approx(-7.0 + float(params.reward.step_penalty))
    assert int(state2.step_count) == 0  # auto-reset
    np.testing.assert_array_equal(info["final_observation"].grid, obs.grid)


def test_make_single_task_id_and_errors():
    env, params = jaxarc.make("007bbfb7-eval")
    assert env.task_source.num_tasks == 1
    assert env.config.environment.episode_mode == "eval"
    with pytest.raises(ValueError, match="unknown environment"):
        jaxarc.make("no-such-env")
    with pytest.raises(TypeError, match="unknown option"):
        jaxarc.make("ARC-AGI-1", colour="red")
    with pytest.raises(TypeError, match="data_dir"):
        jaxarc.make("MiniARC")


def test_make_directory_sets(miniarc_dir):
    env, params = jaxarc.make("MiniARC", data_dir=str(miniarc_dir))
    assert env.config.dataset.canvas_shape == (5, 5)
    assert env.task_source.num_tasks == 149
    obs, state = env.reset(jax.random.key(0), params)
    assert obs.grid.shape == (5, 5)


def test_register_custom_factory():
    def factory(**options):
        return jaxarc.make("ARC-AGI-1", max_episode_steps=3, **options)

    jaxarc.register("my-arc", factory, overwrite=True)
    env, _ = jaxarc.make("my-arc")
    assert env.config.environment.max_episode_steps == 3
    with pytest.raises(ValueError, match="already registered"):
        jaxarc.register("my-arc", factory)


def test_state_bytes_per_environment_fit_budget():
    for fmt, limit in (("point", 8192), ("bbox", 8192)):
        env, _ = jaxarc.make("ARC-AGI-1", selection_format=fmt, max_episode_steps=100)
        _, state = env.reset(jax.random.key(0), env.default_params)
        size = sum(x.nbytes for x in jax.tree.leaves(state))
        assert size < limit, f"{fmt}: {size} bytes per environment"


def test_state_serialisation_round_trip_without_the_bank(tmp_path):
    env, params = jaxarc.make("ARC-AGI-1", selection_format="bbox")
    config, bank = env.config, env.task_source
    states, _ = batch_reset(jax.random.split(jax.random.key(0), 3), config, bank)
    actions = jaxarc.envs.BboxAction(
        jnp.array([2, 26, 28]), jnp.zeros(3), jnp.zeros(3), jnp.ones(3), jnp.ones(3)
    )
    states, *_ = batch_step(states, actions, config)
    path = save_state(tmp_path / "state.npz", states, config)
    assert path.stat().st_size < 100_000  # the 9 MB bank is not in the file
    with np.load(path) as saved:  # the pair is read from the bank again on load
        assert not [name for name in saved.files if name.startswith(".pair.")]
    loaded = load_state(path, config, bank)
    assert loaded.source is bank
    for a, b in zip(jax.tree.leaves(states), jax.tree.leaves(loaded), strict=True):
        if jnp.issubdtype(a.dtype, jax.dtypes.prng_key):
            a, b = jax.random.key_data(a), jax.random.key_data(b)
        np.testing.assert_array_equal(a, b)
    # stepping the loaded state continues identically
    np.testing.assert_array_equal(
        batch_step(states, actions, config)[0].grid, batch_step(loaded, actions, config)[0].grid
    )
    other = JaxArcConfig(action=jaxarc.envs.UnifiedActionConfig(selection_format="point"))
    with pytest.raises(ValueError, match="selection_format"):
        load_state(path, other, bank)


def test_reward_params_are_vmappable():
    env, params = jaxarc.make("ARC-AGI-1")
    weights = RewardParams(failed_submit_penalty=jnp.array([-1.0, -2.0, -3.0]))
    batched = ArcEnvParams(reward=jax.tree.map(lambda x: jnp.broadcast_to(x, (3,)), weights))
    obs, state = jax.vmap(env.reset)(jax.random.split(jax.random.key(0), 3), batched)
    action = jaxarc.envs.PointAction(jnp.full(3, ops.SUBMIT), jnp.zeros(3), jnp.zeros(3))
    out = jax.vmap(env.step)(jax.random.split(jax.random.key(1), 3), state, action, batched)
    step_penalty = float(params.reward.step_penalty)
    np.testing.assert_allclose(out[2], np.array([-1.0, -2.0, -3.0]) + step_penalty, rtol=1e-6)
