"""The learned in-context predictor and the behaviour-cloning warm start."""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from agents_worker import tiny_policy

from jaxarc.agents import PolicyConfig, TrainConfig, make_policy
from jaxarc.agents.grpo.behaviour_cloning import expert_rollout, make_bc_update
from jaxarc.agents.model.learned_incontext import (
    LearnedCellPredictor,
    LearnedPredictionConfig,
    leave_one_out_loss,
)
from jaxarc.data.generator_families import EASY_FAMILIES
from jaxarc.data.generators import make_generator, oracle_actions

QUICK = TrainConfig.preset("quick")


@pytest.mark.parametrize("family", EASY_FAMILIES)
def test_paint_expert_plays_the_oracle_sequence(family):
    """From the start grid the on-device expert takes exactly ``oracle_actions``' steps and
    solves the episode."""
    env_config = QUICK.env_config()
    source = make_generator(f"gen/{family}")
    batch = expert_rollout(jax.random.key(3), env_config, source, 8, QUICK.max_episode_steps)
    assert bool(jnp.all(batch.success))
    for n in range(8):
        h, w = (int(v) for v in batch.obs.input_shape[n, 0])
        inp = np.asarray(batch.obs.input_grid[n, 0])[:h, :w]
        out = np.asarray(batch.targets[n])[:h, :w]
        expected = oracle_actions(family, inp, out)
        valid = np.asarray(batch.valid[n])
        got = [
            (int(batch.actions.operation[n, t]), int(batch.actions.row[n, t]))
            + (int(batch.actions.col[n, t]),)
            for t in range(valid.sum())
        ]
        assert got == [(op, r1, c1) for op, r1, c1, _, _ in expected]


def _permute_colours(grid, permutation):
    return jnp.where(grid > 0, permutation.astype(grid.dtype)[jnp.maximum(grid, 0)], grid)


def test_learned_predictor_is_colour_equivariant_and_trainable():
    """Permuting colours 1..9 in every grid permutes the prediction (colour 0, the
    background, keeps its own weights); a few gradient steps on the leave-one-out loss
    lower it (the predictor has working gradients)."""
    predictor = LearnedCellPredictor(LearnedPredictionConfig(), key=jax.random.key(0))
    source = make_generator("gen/easy")
    # compiled (eagerly, every operation of the generator and the predictor compiles alone)
    sample = jax.jit(lambda key: source.sample_task(key, jnp.int32(0))[0])
    predict = eqx.filter_jit(lambda predictor, *grids: predictor(*grids))
    task = sample(jax.random.key(1))
    usable = jnp.arange(task.demo_inputs.shape[0]) < task.num_demos
    predicted = predict(predictor, task.test_inputs[0], task.demo_inputs, task.demo_outputs, usable)
    permutation = jnp.array([0, 4, 7, 1, 9, 2, 8, 3, 6, 5], jnp.int32)
    permuted = predict(
        predictor,
        _permute_colours(task.test_inputs[0], permutation),
        _permute_colours(task.demo_inputs, permutation),
        _permute_colours(task.demo_outputs, permutation),
        usable,
    )
    np.testing.assert_allclose(permuted[..., permutation], predicted, atol=1e-5)
    inside = np.asarray(task.test_inputs[0] >= 0)
    np.testing.assert_allclose(np.asarray(predicted.sum(-1))[inside], 1.0, atol=1e-5)

    tasks = jax.jit(jax.vmap(sample))(jax.random.split(jax.random.key(2), 16))

    def loss(p):
        return jnp.mean(
            jax.vmap(
                lambda t: leave_one_out_loss(
                    p,
                    t.demo_inputs,
                    t.demo_outputs,
                    t.demo_input_shapes,
                    t.demo_output_shapes,
                    jnp.arange(t.demo_inputs.shape[0]) < t.num_demos,
                )
            )(tasks)
        )

    step = eqx.filter_jit(lambda p: (loss(p), eqx.filter_grad(loss)(p)))
    first, _ = step(predictor)
    for _ in range(30):
        value, grads = step(predictor)
        predictor = jax.tree.map(lambda p, g: p - 0.3 * g, predictor, grads)
    assert float(value) < 0.8 * float(first), (float(first), float(value))


def test_bc_update_marks_the_stage_and_syncs_the_reference():
    """A BC update reports its stage and leaves the reference equal to the new policy."""
    config = QUICK.replace(
        batch_tasks=2,
        group_size=2,
        max_episode_steps=2,
        bc_updates=1,
        num_updates=2,
        # what is checked is the stage switch, not the policy's parts: a smaller program
        policy=dataclasses.replace(tiny_policy(), learned_prediction=True),
    )
    from jaxarc.agents import make_train
    from jaxarc.agents.grpo.train_step import make_optimizer

    init, update = make_train(config)
    state = init(jax.random.key(0))
    bc = make_bc_update(config, make_generator(config.source), make_optimizer(config))
    state, metrics = bc(state)
    assert float(metrics["stage_bc"]) == 1.0
    assert np.isfinite(float(metrics["bc_nll"])) and np.isfinite(float(metrics["bc_cell_loss"]))
    leaves = lambda t: jax.tree.leaves(eqx.filter(t, eqx.is_array))  # noqa: E731
    for a, b in zip(leaves(state.policy), leaves(state.ref_policy), strict=True):
        np.testing.assert_array_equal(a, b)
    state, metrics = update(state)  # index 1 >= bc_updates: a GRPO update
    assert float(metrics["stage_bc"]) == 0.0 and "kl" in metrics


def test_learned_and_hand_made_predictors_are_alternatives():
    with pytest.raises(ValueError, match="alternatives"):
        PolicyConfig(in_context_prediction=True, learned_prediction=True)
    policy = make_policy(
        jax.random.key(0),
        PolicyConfig(in_context_prediction=False, learned_prediction=True),
        QUICK.env_config(),
    )
    assert policy.learned_predictor is not None
