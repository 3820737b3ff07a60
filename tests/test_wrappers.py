"""Wrappers: auto-reset conventions, episode metrics, flat actions, flat observations,
operation restriction; under jit, vmap and lax.scan, composed with gymnax's LogWrapper."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gym_helpers import CANVAS, small_bank
from gymnax.wrappers import LogWrapper

from jaxarc.envs import PointAction, arc_reset
from jaxarc.grid import operation_ids as ops
from jaxarc.gymnax import build_environment
from jaxarc.wrappers import (
    DEFAULT_FIELDS,
    AutoResetWrapper,
    EpisodeMetricsWrapper,
    FlatPointActionWrapper,
    FlattenObservationWrapper,
    RestrictOperationsWrapper,
)

MAX_STEPS = 4
BATCH = 4
STEPS = 2 * MAX_STEPS + 3


@pytest.fixture(scope="module")
def env_params():
    """One point-action environment shared by the tests, so its step compiles once."""
    return build_environment(small_bank(), selection_format="point", max_episode_steps=MAX_STEPS)


def make_rollout(env, params, key):
    """A jitted ``actions [T, B] -> (first obs, (obs, reward, terminated, truncated, info))``
    scanning ``env.step`` from a batched reset."""
    reset_keys = jax.random.split(key, BATCH)

    @jax.jit
    def run(actions):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, params)

        def body(state, inputs):
            t, action = inputs
            keys = jax.random.split(jax.random.fold_in(key, t), BATCH)
            out = jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, state, action, params)
            return out[1], (out[0], *out[2:])

        steps = jnp.arange(jax.tree.leaves(actions)[0].shape[0])
        return obs, jax.lax.scan(body, state, (steps, actions))[1]

    return run


def point_plan(seed: int) -> np.ndarray:
    """``[T, B, 3]`` (op, row, col): environment 0 always CLEARs (so it is truncated every
    MAX_STEPS steps); the others act at random, often submitting."""
    rng = np.random.default_rng(seed)
    operation = np.where(
        rng.random((STEPS, BATCH)) < 0.3, ops.SUBMIT, rng.integers(0, ops.SUBMIT, (STEPS, BATCH))
    )
    operation[:, 0] = ops.CLEAR
    rows = rng.integers(0, CANVAS[0], (STEPS, BATCH))
    cols = rng.integers(0, CANVAS[1], (STEPS, BATCH))
    return np.stack([operation, rows, cols], axis=-1)


def as_point_actions(plan: np.ndarray) -> PointAction:
    return PointAction(*(jnp.asarray(plan[..., k], jnp.int32) for k in range(3)))


@pytest.fixture(scope="module")
def next_step_run(env_params):
    """Metrics over next-step auto-reset over the bare environment (structured actions)."""
    env, params = env_params
    run = make_rollout(
        EpisodeMetricsWrapper(AutoResetWrapper(env, "next_step")), params, jax.random.key(0)
    )
    return run, jax.device_get(run(as_point_actions(point_plan(0))))


@pytest.fixture(scope="module")
def same_step_run(env_params):
    """gymnax's LogWrapper over metrics over same-step auto-reset over flat obs/actions."""
    env, params = env_params
    flat = FlattenObservationWrapper(FlatPointActionWrapper(env))
    plan = point_plan(0)
    indices = np.vectorize(flat.flat_index)(plan[..., 0], plan[..., 1], plan[..., 2])
    logged = LogWrapper(EpisodeMetricsWrapper(AutoResetWrapper(flat, "same_step")))
    run = make_rollout(logged, params, jax.random.key(0))
    with jax.numpy_dtype_promotion("standard"):  # gymnax's LogWrapper mixes bool and int
        return flat, jax.device_get(run(jnp.asarray(indices, jnp.int32)))


def test_next_step_and_same_step_conventions(next_step_run, same_step_run):
    _, (_, (obs_n, reward_n, _, trunc_n, info_n)) = next_step_run
    flat, (_, (obs_s, _, _, trunc_s, info_s)) = same_step_run
    count_n = obs_n.step_count[:, 0]
    # next-step: 1..4 (the terminal observation itself), 0 (the reset step), 1..4, 0, 1
    np.testing.assert_array_equal(count_n, [1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1])
    np.testing.assert_array_equal(trunc_n[:, 0], count_n == MAX_STEPS)
    np.testing.assert_array_equal(info_n["autoreset"][:, 0], count_n == 0)
    assert reward_n[4, 0] == 0 and (reward_n[:4, 0] != 0).all()
    # same-step: 1, 2, 3, 0 (already the next episode) ...; the terminal one in info
    step_count_at = flat.fields.index("step_count")
    offsets = np.cumsum([0, *(int(np.prod(getattr(obs_n, f).shape[2:])) for f in flat.fields)])
    count_s = obs_s[:, 0, offsets[step_count_at]]
    final_s = info_s["final_observation"][:, 0, offsets[step_count_at]]
    np.testing.assert_array_equal(count_s, [1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3])
    np.testing.assert_array_equal(final_s, [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3])
    np.testing.assert_array_equal(trunc_s[:, 0], final_s == MAX_STEPS)
    # the next-step terminal observation is the same-step final observation (first episode)
    grid_at = slice(offsets[flat.fields.index("grid")], offsets[flat.fields.index("grid") + 1])
    np.testing.assert_array_equal(
        obs_n.grid[MAX_STEPS - 1].reshape(BATCH, -1)[0],
        info_s["final_observation"][MAX_STEPS - 1, 0, grid_at],
    )


def episode_reference(rewards, dones, similarity, success, counted):
    """NumPy reference for EpisodeMetricsWrapper over one environment's transitions."""
    out, ret, length, best, solved = [], 0.0, 0, 0.0, False
    for r, d, s, ok, c in zip(rewards, dones, similarity, success, counted, strict=True):
        if c:
            ret, length, best, solved = ret + r, length + 1, max(best, s), solved or ok
        out.append((ret, length, best, solved, d and c))
        if d and c:
            ret, length, best, solved = 0.0, 0, 0.0, False
    return out


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_episode_metrics_match_a_numpy_reference(mode, next_step_run, same_step_run):
    run = next_step_run if mode == "next_step" else same_step_run
    _, (_, reward, term, trunc, info) = run[1]
    done = term | trunc
    assert info["episode_done"].sum() >= BATCH  # episodes did end
    counted = ~info["autoreset"]
    for b in range(BATCH):
        ref = episode_reference(
            reward[:, b],
            done[:, b],
            info["similarity"][:, b],
            info["success"][:, b],
            counted[:, b],
        )
        got = zip(
            info["episode_return"][:, b],
            info["episode_length"][:, b],
            info["episode_best_similarity"][:, b],
            info["episode_success"][:, b],
            info["episode_done"][:, b],
            strict=True,
        )
        for (r_ref, l_ref, s_ref, ok_ref, d_ref), (r, length, s, ok, d) in zip(
            ref, got, strict=True
        ):
            assert abs(r - r_ref) < 1e-5 and length == l_ref and abs(s - s_ref) < 1e-6
            assert ok == ok_ref and d == d_ref
    if mode == "same_step":  # gymnax's LogWrapper agrees on finished episodes' returns
        ended = info["returned_episode"]
        np.testing.assert_array_equal(ended, info["episode_done"])
        np.testing.assert_allclose(
            info["returned_episode_returns"][ended], info["episode_return"][ended], rtol=1e-6
        )


def test_wrapped_rollout_compiles_once(next_step_run, count_compilations):
    run = next_step_run[0]
    actions = [as_point_actions(point_plan(seed)) for seed in (5, 6, 7)]
    with count_compilations() as counter:
        for batch in actions:
            jax.block_until_ready(run(batch))
    assert counter.programs == 0


def test_episode_metrics_of_a_solved_episode(env_params):
    env, params = env_params
    wrapped = EpisodeMetricsWrapper(env)
    _, state = wrapped.reset(jax.random.key(0), params)
    grow = env.task_source.task_ids.index("grow")  # pair 0: [[3]] -> 2x2 of 3
    inner, _ = arc_reset(jax.random.key(0), env.config, env.task_source, grow, 0, params.reward)
    state = eqx.tree_at(lambda s: s.env_state, state, inner)
    plan = [(ops.RESIZE, 1, 1), (ops.FLOOD_0 + 3, 1, 1), (ops.SUBMIT, 0, 0)]
    rewards = []
    for k, (op, row, col) in enumerate(plan):
        _, state, reward, terminated, _, info = wrapped.step(
            jax.random.key(k), state, PointAction(op, row, col), params
        )
        rewards.append(float(reward))
    assert bool(terminated) and bool(info["episode_done"]) and bool(info["episode_success"])
    assert int(info["episode_length"]) == 3
    assert abs(float(info["episode_return"]) - sum(rewards)) < 1e-6
    assert float(info["episode_best_similarity"]) == 1.0
    assert int(state.episode_length) == 0  # totals restart after the episode


def test_flat_point_actions_match_a_numpy_reference(env_params):
    env, params = env_params
    restricted = RestrictOperationsWrapper(env, ["FILL_2", ops.SUBMIT, "flood_1"])
    flat = FlatPointActionWrapper(restricted)
    operations = (ops.FILL_0 + 2, ops.FLOOD_0 + 1, ops.SUBMIT)
    height, width = CANVAS
    assert flat.operations == operations and flat.action_space(params).n == 3 * height * width
    indices = jnp.arange(flat.num_actions, dtype=jnp.int32)
    actions = jax.vmap(flat.to_point_action)(indices)
    reference = np.array(
        [
            (operations[i // (height * width)], (i % (height * width)) // width, i % width)
            for i in range(flat.num_actions)
        ]
    )
    np.testing.assert_array_equal(
        np.stack([actions.operation, actions.row, actions.col], axis=1), reference
    )
    assert flat.flat_index(ops.SUBMIT, 2, 3) == (2 * height + 2) * width + 3
    validating, _ = build_environment(small_bank(), max_episode_steps=MAX_STEPS, validate=True)
    with pytest.raises(ValueError, match=r"action 875 is outside Discrete\(875\)"):
        FlatPointActionWrapper(validating).to_point_action(jnp.int32(875))  # from Python
    with pytest.raises(Exception, match=r"action outside Discrete\(875\)"):  # compiled
        jax.block_until_ready(
            jax.jit(FlatPointActionWrapper(validating).to_point_action)(jnp.int32(875))
        )
    with pytest.raises(ValueError, match="needs point actions"):
        FlatPointActionWrapper(build_environment(small_bank(), selection_format="bbox")[0])


def test_flat_observations_follow_the_fields(env_params):
    env, params = env_params
    fields = ("grid", "input_grid", "demo_mask", "step_count")
    flat_env = FlattenObservationWrapper(env, fields)
    obs, _ = flat_env.reset(jax.random.key(1), params)
    inner_obs, _ = env.reset(jax.random.key(1), params)
    expected = np.concatenate(
        [np.ravel(np.asarray(getattr(inner_obs, f))).astype(np.float32) for f in fields]
    )
    np.testing.assert_array_equal(np.asarray(obs), expected)
    space = flat_env.observation_space(params)
    assert space.shape == expected.shape and bool(space.contains(obs))
    assert FlattenObservationWrapper(env).observation_space(params).shape[0] == sum(
        int(np.prod(env.observation_space(params).spaces[f].shape)) for f in DEFAULT_FIELDS
    )
    with pytest.raises(ValueError, match="unknown observation field"):
        FlattenObservationWrapper(env, ("target",))


def test_restricted_operations_are_no_op_steps(env_params):
    env, params = env_params
    restricted = RestrictOperationsWrapper(env, ["FILL_4", "SUBMIT"])
    obs, state = restricted.reset(jax.random.key(0), params)
    allowed = np.zeros(ops.NUM_OPERATIONS, bool)
    allowed[[ops.FILL_0 + 4, ops.SUBMIT]] = True
    np.testing.assert_array_equal(np.asarray(obs.allowed_operations), allowed)
    step = restricted.step
    obs2, state2, *_ = step(jax.random.key(1), state, PointAction(ops.CLEAR, 0, 0), params)
    np.testing.assert_array_equal(np.asarray(obs2.grid), np.asarray(obs.grid))  # no-op
    assert int(obs2.step_count) == 1  # but a step
    obs3, *_ = step(jax.random.key(2), state2, PointAction(ops.FILL_0 + 4, 0, 0), params)
    assert int(obs3.grid[0, 0]) == 4
    samples = jax.vmap(restricted.action_space(params).sample)(
        jax.random.split(jax.random.key(3), 256)
    )
    assert set(np.unique(np.asarray(samples.operation))) == {ops.FILL_0 + 4, ops.SUBMIT}
    with pytest.raises(ValueError, match="unknown operation 'PAINT'"):
        RestrictOperationsWrapper(env, ["PAINT"])
    with pytest.raises(ValueError, match="none of the operations"):
        RestrictOperationsWrapper(RestrictOperationsWrapper(env, ["FILL_1"]), ["FILL_2"])
