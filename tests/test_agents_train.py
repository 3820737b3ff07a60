"""Group rollouts, the surrogate train step (compiled == eager, ratio 1 on the first epoch,
the adaptive fallback) and a short training run that must beat the random policy."""

from __future__ import annotations

import dataclasses
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jaxtyping import Array, Float32, Int32

from jaxarc.agents import (
    AbstractPolicy,
    GRPOConfig,
    PolicyConfig,
    TrainConfig,
    TrainingBatchJAX,
    UniformPolicy,
    create_adaptive_train_step,
    create_jax_surrogate_train_step,
    group_rollout,
    grpo_loss,
    make_evaluator,
    make_optimizer,
    make_policy,
    make_train,
    surrogate_step,
)
from jaxarc.agents.grpo.loss import group_task_table, policy_log_probs_and_entropy
from jaxarc.agents.grpo.train import load_task_source
from jaxarc.agents.grpo.train_step import gradient_norm
from jaxarc.agents.model.cell_features import (
    STEP_CHANNELS,
    TASK_CHANNELS,
    cell_features,
    step_cells,
    task_cells,
)
from jaxarc.agents.model.policy import TaskEncoding
from jaxarc.grid.operation_ids import NUM_OPERATIONS

SMALL = TrainConfig(
    batch_tasks=2,
    group_size=3,
    max_episode_steps=3,
    similarity_weight=0.5,  # a graded reward, so groups differ (the env default is 0.0)
    lr=3e-2,
    policy=PolicyConfig(channels=4, pair_channels=4, context_size=8, head_hidden=8),
    grpo=GRPOConfig(epochs=1, minibatches=1, beta=0.05),
)


def _copy(tree):
    return jax.tree.map(lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, tree)


@pytest.fixture(scope="module")
def rollout_batch():
    env_config = SMALL.env_config()
    policy = make_policy(jax.random.key(0), SMALL.policy, env_config)
    run = eqx.filter_jit(
        lambda p, k: group_rollout(
            p, k, env_config, load_task_source(SMALL), SMALL.reward_params(), 2, 3, 3
        )
    )
    trajectories = run(policy, jax.random.key(1))
    batch = TrainingBatchJAX(
        obs=trajectories.obs,
        actions=trajectories.actions,
        old_log_probs=trajectories.log_probs,
        ref_log_probs=trajectories.log_probs - 0.1,
        advantages=jnp.broadcast_to(
            jnp.array([1.0, -0.5, -0.5, 0.3, 0.3, -0.6], jnp.float32)[:, None],
            trajectories.valid.shape,
        ),
        valid=trajectories.valid,
    )
    return policy, trajectories, batch


def test_groups_start_identical_and_finished_steps_are_masked(rollout_batch):
    _, traj, _ = rollout_batch
    grids = np.asarray(traj.obs.grid[:, 0]).reshape(2, 3, 8, 8)
    demos = np.asarray(traj.obs.demo_inputs[:, 0]).reshape(2, 3, -1)
    for group in range(2):
        for member in range(1, 3):
            np.testing.assert_array_equal(grids[group, member], grids[group, 0])
            np.testing.assert_array_equal(demos[group, member], demos[group, 0])
    assert not np.array_equal(grids[0, 0], grids[1, 0])  # different tasks per group
    valid = np.asarray(traj.valid)
    assert valid[:, 0].all()
    assert np.all(valid[:, 1:] <= valid[:, :-1])  # once finished, never valid again
    rewards = np.asarray(traj.rewards)
    assert np.all(rewards[~valid] == 0.0)
    np.testing.assert_allclose(traj.returns, (rewards * valid).sum(axis=1), rtol=1e-6)


def test_ratio_is_one_before_the_first_update(rollout_batch):
    policy, _, batch = rollout_batch
    loss = eqx.filter_jit(lambda p, b: grpo_loss(p, b, SMALL.grpo))
    _, metrics = loss(policy, batch)
    assert float(metrics["ratio_mean"]) == pytest.approx(1.0, abs=1e-5)
    assert float(metrics["clip_fraction"]) == 0.0
    optimizer = make_optimizer(SMALL)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    step = create_jax_surrogate_train_step(policy, optimizer, SMALL.grpo)
    updated, _, _ = step(_copy(policy), _copy(opt_state), _copy(batch))
    _, after = loss(updated, batch)
    assert abs(float(after["ratio_mean"]) - 1.0) > 1e-4  # the policy moved


def _sgd():
    """Plain SGD (with the trainer's global-norm clipping): Adam's first step divides by
    |g| and would amplify float rounding of near-zero gradients into +-lr differences."""
    return optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1))


@pytest.fixture(scope="module")
def eager_reference(rollout_batch):
    """One surrogate step executed eagerly (``jax.disable_jit``) with SGD."""
    policy, _, batch = rollout_batch
    optimizer = _sgd()
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    with jax.disable_jit():
        eager_policy, _, eager_metrics = surrogate_step(
            policy, opt_state, batch, optimizer, SMALL.grpo
        )
    return optimizer, opt_state, eager_policy, eager_metrics


# Two layouts of one batch give one loss up to float32 summation order: the loss lands near
# 0 (2.4e-4 on this batch), where the reordered sums differed by 6.6e-9, a relative 2.7e-5,
# so the losses are compared with an absolute tolerance too.
LOSS_ATOL = 1e-7


def _assert_same_arrays(a, b, tol):
    leaves_a = jax.tree.leaves(eqx.filter(a, eqx.is_array))
    leaves_b = jax.tree.leaves(eqx.filter(b, eqx.is_array))
    for x, y in zip(leaves_a, leaves_b, strict=True):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def test_compiled_step_equals_eager_step(rollout_batch, eager_reference):
    policy, _, batch = rollout_batch
    optimizer, opt_state, eager_policy, eager_metrics = eager_reference
    step = create_jax_surrogate_train_step(policy, optimizer, SMALL.grpo)
    compiled_policy, _, compiled_metrics = step(_copy(policy), _copy(opt_state), _copy(batch))
    _assert_same_arrays(compiled_policy, eager_policy, 1e-5)
    for name, value in compiled_metrics.items():
        np.testing.assert_allclose(value, eager_metrics[name], rtol=1e-5, atol=1e-5)


class OperationBiasPolicy(AbstractPolicy):
    """The uniform policy plus a learned bias on the operation logits: few primitives, so its
    eager step (one compile per primitive) is quick."""

    uniform: UniformPolicy
    operation_bias: Float32[Array, " O"]

    def act(self, obs, task: TaskEncoding):
        distribution = self.uniform.act(obs, task)
        return eqx.tree_at(
            lambda d: d.operation_logits,
            distribution,
            distribution.operation_logits + self.operation_bias,
        )


class BranchingPolicy(AbstractPolicy):
    """A user policy with Python control flow on an integer array: fine eagerly, not under jit
    (``int()`` of a traced value). Both branches give the wrapped policy's distribution."""

    inner: AbstractPolicy
    mode: Int32[Array, ""]

    def encode_task(self, obs):
        return self.inner.encode_task(obs)

    def act(self, obs, task: TaskEncoding):
        if int(self.mode) == 1:  # needs a concrete value
            return self.inner.act(obs, task)
        return self.inner.act(obs, task)


def test_adaptive_step_falls_back_once_with_identical_results(rollout_batch):
    _, _, batch = rollout_batch
    canvas = SMALL.env_config().dataset.canvas_shape
    inner = OperationBiasPolicy(
        UniformPolicy(SMALL.selection_format, canvas),
        jnp.linspace(-1.0, 1.0, NUM_OPERATIONS, dtype=jnp.float32),
    )
    optimizer = _sgd()
    opt_state = optimizer.init(eqx.filter(inner, eqx.is_inexact_array))
    # the same step compiled, for the policy without the untraceable branch
    compiled_inner, _, compiled_metrics = create_jax_surrogate_train_step(
        inner, optimizer, SMALL.grpo
    )(_copy(inner), _copy(opt_state), batch)
    policy = BranchingPolicy(inner, jnp.int32(1))
    step = create_adaptive_train_step(policy, optimizer, SMALL.grpo)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, state, metrics = step(policy, opt_state, batch)
        second, _, _ = step(first, state, batch)
    fallbacks = [w for w in caught if "falling back to eager" in str(w.message)]
    assert len(fallbacks) == 1
    assert isinstance(second, BranchingPolicy)
    assert float(jnp.abs(first.inner.operation_bias - inner.operation_bias).max()) > 1e-4
    _assert_same_arrays(first.inner, compiled_inner, 1e-6)
    np.testing.assert_allclose(metrics["loss"], compiled_metrics["loss"], rtol=1e-6)


def test_make_train_update_metrics_and_reference_refresh():
    config = SMALL.replace(grpo=GRPOConfig(epochs=2, minibatches=1, ref_refresh_every=2))
    init, update = make_train(config)
    state = init(jax.random.key(0))
    state, metrics = update(state)
    for name in ("mean_return", "success_rate", "kl", "clip_fraction", "entropy"):
        assert np.isfinite(float(metrics[name])), name
    assert float(metrics["first_epoch_clip_fraction"]) >= 0.0
    assert float(metrics["env_steps"]) == 2 * 3 * 3
    assert 0.0 <= float(metrics["equal_group_fraction"]) <= 1.0
    leaves = lambda t: jax.tree.leaves(eqx.filter(t, eqx.is_array))
    pairs = zip(leaves(state.policy), leaves(state.ref_policy), strict=True)
    differs = [not np.array_equal(a, b) for a, b in pairs]
    assert any(differs)  # after 1 update the reference still lags
    state, _ = update(state)
    for a, b in zip(leaves(state.policy), leaves(state.ref_policy), strict=True):
        np.testing.assert_array_equal(a, b)  # refreshed after update 2
    assert int(state.update_index) == 2


# The short run: the quick preset's policy and settings on one family, smaller batches.
SHORT_RUN = TrainConfig.preset("quick").replace(
    source="gen/recolour",  # which colour becomes which is read from the demonstrations
    batch_tasks=8,
    group_size=4,
    bc_updates=40,
    num_updates=40,
    eval_tasks=128,
)


@pytest.mark.long  # a learning run (make test-long); the ladder and hindsight tests learn too
def test_short_training_run_beats_the_random_policy():
    """40 behaviour-cloning updates (8 x 4 expert episodes each) of the quick preset's
    policy, hand-made predictor OFF and learned in-context predictor on, on one family
    (``gen/recolour``), solve a clear share of 128 fresh held-out instances (eval mode,
    keys never used in training), where the uniform random policy and the untrained policy
    solve almost none. (About a minute on an idle 2-core machine: no GRPO update here, its
    compile alone would take ~40 s; the staged BC -> GRPO switch is tested in
    test_agents_learned.py and the GRPO update in this file.)"""
    config = SHORT_RUN
    assert not config.policy.in_context_prediction and config.policy.learned_prediction
    assert config.bc_updates == config.num_updates
    evaluate = make_evaluator(config, greedy=True, details=True)  # one compile, used twice
    key = jax.random.key(12345)
    uniform = UniformPolicy(config.selection_format, (config.canvas, config.canvas))
    sample = make_evaluator(config, greedy=False, details=True)
    random_result = sample(uniform, key)  # the random policy acts by sampling
    init, update = make_train(config)
    state = eqx.filter_jit(init)(jax.random.key(0))  # one compile, not one per operation
    untrained = evaluate(state.policy, key)
    for _ in range(config.num_updates):
        state, metrics = update(state)
    assert float(metrics["stage_bc"]) == 1.0
    trained = evaluate(state.policy, key)
    assert float(random_result["success"]) < 0.05
    assert float(untrained["success"]) < 0.05  # what it solves, it learned
    assert float(trained["success"]) >= 0.3, (trained, untrained, random_result)


def _with_task_table(batch, traj, shared_first_step=False):
    """``batch`` with the group task table of ``traj`` (groups of 3)."""
    task_obs, task_index = group_task_table(traj.obs, 3)
    tabled = eqx.tree_at(
        lambda b: (b.task_obs, b.task_index),
        batch,
        (task_obs, task_index),
        is_leaf=lambda x: x is None,
    )
    return dataclasses.replace(tabled, shared_first_step=shared_first_step)


def _small_grpo_loss(policy, batch):
    return grpo_loss(policy, batch, SMALL.grpo)[0]


# compiled once per test process, so that tests on the same batch shapes share compilations
_compiled_loss = eqx.filter_jit(_small_grpo_loss)
_compiled_loss_and_grad = eqx.filter_jit(eqx.filter_value_and_grad(_small_grpo_loss))


def _assert_minibatches_match(policy, tabled, batch):
    """Minibatches of ``tabled`` (one smaller than its table) keep its task index and flag
    and give the loss of the same episodes of ``batch`` (the loss alone: no gradients
    compiled for these shapes)."""
    for indices in (jnp.array([4, 0, 3], jnp.int32), jnp.array([5], jnp.int32)):
        part = tabled.take(indices)
        assert part.task_index.shape == indices.shape
        assert part.shared_first_step == tabled.shared_first_step
        plain = jax.tree.map(lambda x, i=indices: x[i], batch)
        np.testing.assert_allclose(
            _compiled_loss(policy, part), _compiled_loss(policy, plain), rtol=1e-6
        )


def test_task_table_gives_the_per_episode_loss_and_gradients(rollout_batch):
    """Encoding each group's task once (the task table) is the same loss and gradient as
    encoding every episode; a minibatch smaller than the table gets one row per episode."""
    policy, traj, batch = rollout_batch
    tabled = _with_task_table(batch, traj)
    loss, grads = _compiled_loss_and_grad(policy, batch)
    tabled_loss, tabled_grads = _compiled_loss_and_grad(policy, tabled)
    np.testing.assert_allclose(tabled_loss, loss, rtol=1e-6, atol=LOSS_ATOL)
    _assert_same_arrays(tabled_grads, grads, 1e-5)
    assert float(gradient_norm(grads)) > 0
    _assert_minibatches_match(policy, tabled, batch)


def test_shared_first_step_gives_the_per_episode_loss_and_gradients(rollout_batch):
    """Acting on each group's first observation once (``shared_first_step``) is the same
    loss, gradient and per-step log-probabilities as acting on every episode's own first
    observation; ``take`` keeps the flag, also when it gives one table row per episode."""
    policy, traj, batch = rollout_batch
    shared = _with_task_table(batch, traj, shared_first_step=True)
    # the first actions differ within a group, so each episode must read its own action
    first = np.stack([np.asarray(a)[:, 0] for a in jax.tree.leaves(traj.actions)], axis=1)
    assert any(len({tuple(row) for row in first[g * 3 : g * 3 + 3]}) > 1 for g in range(2))
    log_probs = eqx.filter_jit(policy_log_probs_and_entropy)
    expected = log_probs(policy, batch.obs, batch.actions)
    got = log_probs(policy, batch.obs, batch.actions, shared.task_obs, shared.task_index, True)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    loss, grads = _compiled_loss_and_grad(policy, batch)
    shared_loss, shared_grads = _compiled_loss_and_grad(policy, shared)
    np.testing.assert_allclose(shared_loss, loss, rtol=1e-6, atol=LOSS_ATOL)
    _assert_same_arrays(shared_grads, grads, 1e-5)
    _assert_minibatches_match(policy, shared, batch)


def test_split_trunk_layer_is_the_whole_convolution(rollout_batch):
    """The trunk's first layer on the per-episode channels plus on the per-step channels
    plus its bias is the layer on all channels in the reference layout."""
    policy, traj, _ = rollout_batch
    obs = jax.tree.map(lambda x: x[1, 2], traj.obs)
    wrong = jax.random.uniform(jax.random.key(3), policy.canvas)

    @eqx.filter_jit  # one program (eagerly, every operation of the policy compiles alone)
    def layers(policy, obs, wrong):
        task = policy.encode_task(obs)
        layer = policy.trunk[0]
        whole = layer(cell_features(obs, task.roles, task.cell_prediction, wrong, policy.canvas))
        task_part = layer.partial(
            task_cells(obs.input_grid, task.roles, task.cell_prediction), TASK_CHANNELS
        )
        step_part = layer.partial(step_cells(obs, task.roles, wrong, policy.canvas), STEP_CHANNELS)
        return whole, task_part + step_part + layer.bias[None, None, :], task.trunk_input, task_part

    whole, split, trunk_input, task_part = layers(policy, obs, wrong)
    np.testing.assert_allclose(split, whole, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(trunk_input, task_part, rtol=1e-6, atol=1e-6)
