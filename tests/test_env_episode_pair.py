"""The state keeps its episode's pair: the step reads no task data from the source."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxarc
from jaxarc.envs import batch_reset
from jaxarc.envs.episode import source_episode_pair
from jaxarc.envs.functional import step_one


def _scrambled(bank):
    """``bank`` with every grid cell's colour changed (shapes, counts and flags kept)."""
    recolour = lambda g: jnp.where(g >= 0, (g + 3) % 10, g).astype(g.dtype)  # noqa: E731
    fields = ("demo_inputs", "demo_outputs", "test_inputs", "test_outputs")
    return eqx.tree_at(
        lambda b: tuple(getattr(b, f) for f in fields),
        bank,
        tuple(recolour(getattr(bank, f)) for f in fields),
    )


def _assert_trees_equal(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("selection_format", ["point", "bbox", "mask"])
def test_the_step_reads_no_task_data_from_the_source(selection_format):
    """Stepping with a source whose grids are all different changes nothing but the
    observation's in-context pairs (nothing at all with the context given at reset)."""
    env, params = jaxarc.make(
        "ARC-AGI-1", selection_format=selection_format, episode_context="at_reset"
    )
    config, bank = env.config, env.task_source
    batch = 8
    states, _ = batch_reset(jax.random.split(jax.random.key(3), batch), config, bank)
    space = env.action_space(params)
    scrambled = _scrambled(bank)

    @jax.jit
    def step_with(states, key, source):
        actions = jax.vmap(space.sample)(jax.random.split(key, batch))
        return jax.vmap(lambda s, a: step_one(s, a, config, source))(states, actions)

    for t in range(4):
        key = jax.random.key(10 + t)
        real = step_with(states, key, bank)
        other = step_with(states, key, scrambled)
        _assert_trees_equal(real, other)  # states, observations, rewards, dones, infos
        states = real[0]


@pytest.mark.parametrize("env_name", ["ARC-AGI-1", "gen/easy"])
def test_the_state_pair_is_the_sources_pair_across_auto_resets(env_name):
    """Through the gymnax face's auto-reset (2-step episodes, a bank and a generated
    source's task pool), ``state.pair`` is the pair the source holds for the state's task."""
    env, params = jaxarc.make(env_name, max_episode_steps=2)
    source, mode, batch = env.task_source, env.config.environment.episode_mode, 8
    space = env.action_space(params)

    @jax.jit
    def rollout(key):
        _, states = jax.vmap(env.reset, (0, None))(jax.random.split(key, batch), params)

        def body(states, key):
            act_key, step_key = jax.random.split(key)
            actions = jax.vmap(space.sample)(jax.random.split(act_key, batch))
            step = jax.vmap(env.step, (0, 0, 0, None))
            states = step(jax.random.split(step_key, batch), states, actions, params)[1]
            return states, states

        return jax.lax.scan(body, states, jax.random.split(key, 5))[1]

    states = rollout(jax.random.key(0))  # every leaf [5, batch, ...]
    read = jax.vmap(jax.vmap(lambda s, t, p: source_episode_pair(source, s, t, p, mode)))
    expected = read(states.episode_store, states.task_index, states.pair_index)
    _assert_trees_equal(states.pair, expected)
    inputs = np.asarray(states.pair.input_grid).reshape(5 * batch, -1)
    assert len(np.unique(inputs, axis=0)) > batch  # episodes were reset onto other pairs
