"""The in-context cell predictor (jaxarc.agents.model.incontext): parity with a plain NumPy
reference, region averaging, and what it predicts on generated tasks."""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxarc.agents.model.incontext import (
    CellPredictionConfig,
    attend_to_demonstrations,
    average_over_regions,
    neighbourhood_codes,
    predict_cells,
)
from jaxarc.data.generators import make_generator

CONFIG = CellPredictionConfig()


def _reference_attention(inp, demo_in, demo_out, usable, config):
    """Loop-by-loop NumPy version of attend_to_demonstrations (same definition)."""
    height, width = inp.shape

    def neighbourhood(grid, r, c):
        codes = []
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                y, x = r + dy, c + dx
                inside = 0 <= y < grid.shape[0] and 0 <= x < grid.shape[1]
                codes.append(int(grid[y, x]) if inside else -2)
        return codes

    weights = np.ones(9)
    weights[4] = config.centre_weight
    keys, values = [], []
    for p in range(demo_in.shape[0]):
        for r in range(height):
            for c in range(width):
                if usable[p] and demo_in[p, r, c] >= 0 and demo_out[p, r, c] >= 0:
                    keys.append(neighbourhood(demo_in[p], r, c))
                    values.append(int(demo_out[p, r, c]))
    out = np.zeros((height, width, 10))
    for r in range(height):
        for c in range(width):
            query = neighbourhood(inp, r, c)
            scores = np.array(
                [
                    config.sharpness * np.sum(weights * (np.array(query) == np.array(k)))
                    for k in keys
                ]
            )
            attention = np.exp(scores - scores.max())
            attention /= attention.sum()
            for a, v in zip(attention, values, strict=True):
                out[r, c, v] += a
    return out


def _random_grid(rng, canvas, shape):
    grid = np.full(canvas, -1, np.int8)
    grid[: shape[0], : shape[1]] = rng.integers(0, 4, size=shape)
    return grid


@pytest.mark.parametrize("streaming", [False, True])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_attention_matches_numpy_reference(streaming, seed):
    rng = np.random.default_rng(seed)
    canvas = (5, 6)
    shapes = [tuple(rng.integers(2, 6, size=2).clip(max=canvas)) for _ in range(4)]
    inp = _random_grid(rng, canvas, shapes[0])
    demo_in = np.stack([_random_grid(rng, canvas, s) for s in shapes[1:]])
    demo_out = np.where(demo_in >= 0, rng.integers(0, 10, size=demo_in.shape), -1)
    demo_out = demo_out.astype(np.int8)
    usable = np.array([bool(rng.integers(2)), bool(rng.integers(2)), True])
    config = CellPredictionConfig(centre_weight=float(rng.uniform(1, 10)), sharpness=0.7)
    got, any_usable = attend_to_demonstrations(
        jnp.asarray(inp),
        jnp.asarray(demo_in),
        jnp.asarray(demo_out),
        jnp.asarray(usable),
        config,
        streaming=streaming,
    )
    assert bool(any_usable)
    expected = _reference_attention(inp, demo_in, demo_out, usable, config)
    np.testing.assert_allclose(np.asarray(got), expected, atol=1e-5)


def test_neighbourhood_codes_mark_the_canvas_edge():
    grid = jnp.arange(12, dtype=jnp.int8).reshape(3, 4) % 10
    codes = np.asarray(neighbourhood_codes(grid))
    assert codes.shape == (3, 4, 9)
    np.testing.assert_array_equal(codes[..., 4], np.asarray(grid))  # the centre
    np.testing.assert_array_equal(codes[0, :, :3], -2)  # nothing above the top row
    np.testing.assert_array_equal(codes[1, 1], [0, 1, 2, 4, 5, 6, 8, 9, 0])


def test_region_average_stays_inside_same_colour_regions():
    grid = jnp.asarray(
        [[1, 1, 2, 2], [1, 1, 2, 3], [4, 4, 4, 3]],
        dtype=jnp.int8,
    )
    values = jax.random.uniform(jax.random.key(0), (3, 4, 2))
    averaged = np.asarray(average_over_regions(values, grid, iterations=30))
    values = np.asarray(values)
    for colour in (1, 2, 3, 4):
        cells = np.asarray(grid) == colour
        # cells of one region only average among themselves: nothing leaks in from outside
        assert np.all(averaged[cells] >= values[cells].min(0) - 1e-6)
        assert np.all(averaged[cells] <= values[cells].max(0) + 1e-6)
        # and after enough rounds it is nearly uniform there
        assert np.ptp(averaged[cells], axis=0).max() < 0.05


def test_no_usable_pair_predicts_every_cell_keeps_its_colour():
    grid = jnp.asarray([[0, 1, -1], [2, 3, -1]], dtype=jnp.int8)
    demos = jnp.broadcast_to(grid, (2, 2, 3))
    in_shapes = jnp.asarray([[2, 2], [2, 2]], jnp.int32)
    out_shapes = jnp.asarray([[1, 2], [2, 1]], jnp.int32)  # shapes change: unusable
    predicted = predict_cells(grid, demos, demos, in_shapes, out_shapes, jnp.ones(2, bool), CONFIG)
    expected = np.where(np.asarray(grid)[..., None] >= 0, np.eye(10)[np.maximum(grid, 0)], 0)
    np.testing.assert_allclose(np.asarray(predicted), expected, atol=1e-6)


@pytest.mark.parametrize("family", ["recolour", "erase", "fill_background", "fill_holes"])
def test_predictions_recover_generated_targets(family):
    """Read from the other demonstration pairs, the most likely colour of every cell of a
    demonstration input is that pair's output, on nearly all generated tasks."""
    source = make_generator(f"gen/{family}")
    tasks, _ = jax.jit(jax.vmap(source.sample_task_and_family))(
        jax.random.split(jax.random.key(3), 64)
    )
    num_demos = tasks.demo_inputs.shape[1]

    def held_out(task, pair):
        mask = jnp.arange(num_demos) != pair
        predicted = predict_cells(
            task.demo_inputs[pair],
            task.demo_inputs,
            task.demo_outputs,
            task.demo_input_shapes,
            task.demo_output_shapes,
            mask,
            CONFIG,
        )
        target = task.demo_outputs[pair]
        correct = (jnp.argmax(predicted, -1) == target.astype(jnp.int32)) | (target < 0)
        return jnp.all(correct)

    solved = jax.jit(jax.vmap(held_out))(tasks, jnp.arange(64) % num_demos)
    assert float(jnp.mean(solved)) >= 0.95


@pytest.mark.parametrize("enabled", [True, False])
def test_policy_reads_the_prediction_and_the_ablation_removes_it(enabled):
    """``PolicyConfig.in_context_prediction`` switches the predictor: on, the policy's task
    encoding carries the prediction of the episode's target; off, zeros. Both act finitely."""
    from jaxarc.agents import PolicyConfig, TrainConfig, make_policy
    from jaxarc.envs.episode import episode_pair
    from jaxarc.envs.functional import batch_reset

    config = TrainConfig.preset("quick")
    env_config = config.env_config(episode_mode="eval")
    policy_config = PolicyConfig(channels=4, context_size=8, head_hidden=8)
    policy_config = dataclasses.replace(policy_config, in_context_prediction=enabled)
    policy = make_policy(jax.random.key(0), policy_config, env_config)
    states, obs = batch_reset(
        jax.random.split(jax.random.key(5), 32), env_config, make_generator("gen/recolour")
    )

    @eqx.filter_jit  # one program (eagerly, every operation of the policy compiles alone)
    def encode_and_act(policy, obs):
        encodings = jax.vmap(policy.encode_task)(obs)
        dists = jax.vmap(policy.act)(obs, encodings)
        return encodings, jax.vmap(lambda d: d.entropy())(dists)

    encodings, entropies = encode_and_act(policy, obs)
    assert bool(jnp.all(jnp.isfinite(entropies)))
    prediction = np.asarray(encodings.cell_prediction)
    if not enabled:
        assert not prediction.any()
        return
    pairs = jax.vmap(lambda s: episode_pair(s.episode_store, s.pair_index, "eval"))(states)
    target = np.asarray(pairs.target_grid)
    recovered = np.all((prediction.argmax(-1) == target) | (target < 0), axis=(1, 2))
    assert recovered.mean() >= 0.95
