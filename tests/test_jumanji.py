"""The Jumanji face under Jumanji's own wrappers, with its specs checking what step returns."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jumanji")

from jumanji.types import StepType  # noqa: E402
from jumanji.wrappers import (  # noqa: E402
    AutoResetWrapper,
    JumanjiToGymWrapper,
    VmapAutoResetWrapper,
)

from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction  # noqa: E402
from jaxarc.grid.operation_ids import SUBMIT  # noqa: E402
from jaxarc.jumanji import (  # noqa: E402
    ArcJumanjiEnv,
    action_from_vector,
    action_to_vector,
    make,
)

MAX_STEPS = 3
PAINT = 1  # a colour-painting operation: a step that neither submits nor ends the episode


@pytest.fixture(scope="module")
def env() -> ArcJumanjiEnv:
    return make("gen/recolour", max_episode_steps=MAX_STEPS, success_bonus=2.0)


def _validate(env: ArcJumanjiEnv, timestep) -> None:
    env.observation_spec.validate(timestep.observation)
    env.reward_spec.validate(timestep.reward)
    env.discount_spec.validate(timestep.discount)


def test_reset_and_step_match_the_specs_and_dm_env_conventions(env):
    state, first = jax.jit(env.reset)(jax.random.key(0))
    _validate(env, first)
    assert int(first.step_type) == int(StepType.FIRST)
    step = jax.jit(env.step)
    paint = jnp.asarray([PAINT, 0, 0], jnp.int32)
    state, mid = step(state, env.action_spec.validate(paint))
    _validate(env, mid)
    assert int(mid.step_type) == int(StepType.MID) and float(mid.discount) == 1.0
    # a submission terminates: LAST with discount 0 (terminated = ~discount in Jumanji)
    _, submitted = step(state, jnp.asarray([SUBMIT, 0, 0], jnp.int32))
    _validate(env, submitted)
    assert int(submitted.step_type) == int(StepType.LAST) and float(submitted.discount) == 0.0
    assert bool(submitted.extras["terminated"]) and not bool(submitted.extras["truncated"])
    # running out of steps truncates: LAST with discount 1
    for _ in range(MAX_STEPS - 1):
        state, last = step(state, paint)
    assert int(last.step_type) == int(StepType.LAST) and float(last.discount) == 1.0
    assert bool(last.extras["truncated"])
    # the reward options of make reach the environment
    assert env.reward.success_bonus == 2.0


def test_generated_action_values_and_vectors_round_trip(env):
    assert env.action_spec.validate(env.action_spec.generate_value()).shape == (3,)
    for action in (
        PointAction(3, 1, 2),
        BboxAction(4, 0, 1, 5, 6),
        MaskAction(5, jnp.arange(64).reshape(8, 8) % 3 == 0),
    ):
        config = env.config
        fmt = {PointAction: "point", BboxAction: "bbox", MaskAction: "mask"}[type(action)]
        config = type(config)(
            environment=config.environment,
            dataset=config.dataset,
            action=type(config.action)(selection_format=fmt),
        )
        back = action_from_vector(action_to_vector(action), config)
        assert jax.tree.all(jax.tree.map(lambda a, b: bool(jnp.all(a == b)), action, back))


def test_auto_reset_wrapper_resets_after_a_submission(env):
    wrapped = AutoResetWrapper(env, next_obs_in_extras=True)
    state, _ = jax.jit(wrapped.reset)(jax.random.key(1))
    state, ts = jax.jit(wrapped.step)(state, jnp.asarray([SUBMIT, 0, 0], jnp.int32))
    _validate(env, ts)
    assert int(ts.step_type) == int(StepType.LAST) and float(ts.discount) == 0.0
    # the state and observation are a fresh episode's; the terminal observation is in extras
    assert int(state.step_count) == 0 and not bool(state.terminated)
    assert int(ts.observation.step_count) == 0
    assert int(ts.extras["next_obs"].step_count) == 1


def test_vmap_auto_reset_wrapper_scans_a_batch(env):
    batch, steps = 3, 2 * MAX_STEPS + 1
    wrapped = VmapAutoResetWrapper(env)
    keys = jax.random.split(jax.random.key(2), batch)

    @jax.jit
    def play(keys):
        state, first = wrapped.reset(keys)
        paint = jnp.tile(jnp.asarray([PAINT, 0, 0], jnp.int32), (batch, 1))

        def body(state, _):
            state, ts = wrapped.step(state, paint)
            return state, (ts.step_type, ts.discount, state.step_count)

        _, trace = jax.lax.scan(body, state, None, length=steps)
        return first, trace

    first, (step_types, discounts, counts) = play(keys)
    assert first.observation.grid.shape == (batch, 8, 8)
    env.observation_spec.validate(jax.tree.map(lambda x: x[0], first.observation))
    # each environment truncates every MAX_STEPS steps and starts again at step 0
    expected = np.tile(np.r_[np.arange(1, MAX_STEPS), 0], steps)[:steps]
    np.testing.assert_array_equal(np.asarray(counts), np.repeat(expected[:, None], batch, 1))
    last = np.asarray(step_types) == int(StepType.LAST)
    np.testing.assert_array_equal(last[:, 0], expected == 0)
    assert np.all(np.asarray(discounts) == 1.0)  # truncations, never terminations


def test_jumanji_to_gym_wrapper_plays_an_episode(env):
    gym_env = JumanjiToGymWrapper(env, seed=3)
    obs, _ = gym_env.reset()
    assert gym_env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = gym_env.step(np.array([PAINT, 1, 1]))
    assert gym_env.observation_space.contains(obs)
    assert not terminated and not truncated and isinstance(reward, float)
    obs, reward, terminated, truncated, info = gym_env.step(np.array([SUBMIT, 0, 0]))
    assert terminated and truncated  # Jumanji's wrapper marks every LAST step truncated
    assert gym_env.observation_space.contains(obs) and bool(info["terminated"])
    assert gym_env.render().shape[-1] == 3
