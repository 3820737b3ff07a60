"""GRPO building blocks: advantages, the k3 KL estimator, the clipped surrogate, and the
policy's structured action distributions (log-probabilities, entropies, sampling)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.agents import (
    BboxDistribution,
    MaskDistribution,
    PointDistribution,
    PolicyConfig,
    TrainConfig,
    UniformPolicy,
    compute_advantages,
    compute_process_advantages,
    k3_kl,
    make_policy,
)
from jaxarc.agents.grpo.loss import clipped_surrogate, masked_mean
from jaxarc.agents.grpo.train import load_task_source
from jaxarc.agents.grpo.train_step import gradient_norm
from jaxarc.agents.model.distributions import USES_SELECTION
from jaxarc.agents.model.tempered import TemperedPolicy
from jaxarc.envs import BboxAction, MaskAction, PointAction
from jaxarc.envs.functional import batch_reset
from jaxarc.grid import operation_ids as ops

RETURNS = np.array(
    [[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 2.0, 3.0]], dtype=np.float32
)


def test_group_advantages_by_hand():
    advantages, equal = compute_advantages(jnp.asarray(RETURNS), "group")
    # group 0: mean 0.5, std 0.5 -> +-1; group 1 all equal -> 0; group 2: mean 1.5, std sqrt(1.25)
    expected = np.array(
        [[1, -1, -1, 1], [0, 0, 0, 0], np.array([-1.5, -0.5, 0.5, 1.5]) / np.sqrt(1.25)]
    )
    np.testing.assert_allclose(advantages, expected, rtol=1e-5, atol=1e-5)
    assert float(equal) == pytest.approx(1 / 3)


def test_none_and_rloo_advantages_by_hand():
    none, equal = compute_advantages(jnp.asarray(RETURNS), "none")
    np.testing.assert_allclose(none[0], [0.5, -0.5, -0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(none[2], [-1.5, -0.5, 0.5, 1.5], atol=1e-6)
    rloo, _ = compute_advantages(jnp.asarray(RETURNS), "rloo")
    # R_i - mean of the other three
    np.testing.assert_allclose(rloo[0], [1 - 1 / 3, 0 - 2 / 3, 0 - 2 / 3, 1 - 1 / 3], atol=1e-6)
    np.testing.assert_allclose(rloo[2], [0 - 2, 1 - 5 / 3, 2 - 4 / 3, 3 - 1], atol=1e-6)
    for values in (none, rloo):
        np.testing.assert_array_equal(values[1], 0.0)
    assert float(equal) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="unknown advantage mode"):
        compute_advantages(jnp.asarray(RETURNS), "ppo")


def test_all_equal_groups_give_exact_zeros():
    returns = jnp.full((5, 8), 0.1, jnp.float32) * jnp.arange(5, dtype=jnp.float32)[:, None]
    for mode in ("group", "none", "rloo"):
        advantages, equal = compute_advantages(returns, mode)
        np.testing.assert_array_equal(advantages, 0.0)
        assert float(equal) == 1.0


def test_process_advantages_by_hand():
    """Step rewards normalised over the group's valid steps, then summed from t to the end."""
    rewards = np.array([[[1.0, 0.0, 2.0], [0.0, 5.0, 7.0]], [[3.0, 3.0, 0.0], [3.0, 3.0, 0.0]]])
    valid = np.array([[[1, 1, 1], [1, 0, 0]], [[1, 1, 0], [1, 1, 0]]], dtype=bool)
    advantages, equal = compute_process_advantages(
        jnp.asarray(rewards, jnp.float32), jnp.asarray(valid)
    )
    # group 0 valid rewards 1, 0, 2, 0: mean 0.75, std sqrt(0.6875); invalid steps ignored
    scaled = (np.array([1.0, 0.0, 2.0, 0.0]) - 0.75) / np.sqrt(0.6875)
    expected_0 = [[scaled[:3].sum(), scaled[1:3].sum(), scaled[2]], [scaled[3], 0.0, 0.0]]
    np.testing.assert_allclose(advantages[0], expected_0, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(advantages[1], 0.0)  # all valid rewards equal
    assert float(equal) == pytest.approx(0.5)


def test_k3_is_an_unbiased_kl_estimate():
    """E_{a~p}[k3(log p(a), log q(a))] equals KL(p || q) computed directly."""
    logits_p = jax.random.normal(jax.random.key(0), (7,))
    logits_q = jax.random.normal(jax.random.key(1), (7,))
    log_p, log_q = jax.nn.log_softmax(logits_p), jax.nn.log_softmax(logits_q)
    p = np.exp(np.asarray(log_p, np.float64))
    direct = float(np.sum(p * (np.asarray(log_p, np.float64) - np.asarray(log_q, np.float64))))
    estimate = float(jnp.sum(jnp.exp(log_p) * k3_kl(log_p, log_q)))
    assert estimate == pytest.approx(direct, rel=1e-4)
    delta = np.asarray(log_q - log_p)
    np.testing.assert_allclose(k3_kl(log_p, log_q), np.exp(delta) - delta - 1, rtol=1e-6)
    assert np.all(np.asarray(k3_kl(log_p, log_q)) >= 0)


def test_clipped_surrogate_and_masked_mean():
    ratio = jnp.array([0.5, 1.0, 1.5, 0.5, 1.5], jnp.float32)
    adv = jnp.array([1.0, 1.0, 1.0, -1.0, -1.0], jnp.float32)
    out = clipped_surrogate(ratio, adv, 0.2, 0.3)
    # positive A: min(r, clip(r)) ; negative A: min(-r, -clip(r)) = -max(r, clip(r))
    np.testing.assert_allclose(out, [0.5, 1.0, 1.3, -0.8, -1.5], rtol=1e-6)
    mask = jnp.array([True, True, False, False, True])
    assert float(masked_mean(out, mask)) == pytest.approx((0.5 + 1.0 - 1.5) / 3)


# ---------------------------------------------------------------- distributions


@pytest.fixture(scope="module")
def observations():
    config = TrainConfig(batch_tasks=2, group_size=2)
    env_config = config.env_config()
    _, obs = batch_reset(
        jax.random.split(jax.random.key(0), 3), env_config, load_task_source(config)
    )
    return config, obs


def _first(tree):
    return jax.tree.map(lambda x: x[0], tree)


@eqx.filter_jit
def _distribution(policy, obs):
    return policy(obs)


def test_gradient_norm_is_the_global_l2_norm_of_the_float_leaves():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=7).astype(np.float32)
    grads = {"w": jnp.asarray(a), "b": jnp.asarray(b), "skipped": None}
    expected = np.sqrt(np.sum(a.astype(np.float64) ** 2) + np.sum(b.astype(np.float64) ** 2))
    norm = jax.jit(gradient_norm)(grads)
    assert norm.dtype == jnp.float32 and norm.shape == ()
    np.testing.assert_allclose(float(norm), expected, rtol=1e-6)
    assert float(gradient_norm({"w": jnp.zeros((2, 2))})) == 0.0


@pytest.mark.parametrize("selection_format", ["point", "bbox", "mask"])
def test_log_prob_is_the_sum_of_its_parts(observations, selection_format):
    config, obs = observations
    config = config.replace(selection_format=selection_format)
    policy = make_policy(jax.random.key(3), PolicyConfig(channels=8), config.env_config())
    dist = _distribution(policy, _first(obs))
    log_ops = np.asarray(jax.nn.log_softmax(dist.operation_logits))
    allowed = np.asarray(obs.allowed_operations[0])
    assert np.all(log_ops[~allowed] < -1e6)  # disallowed operations are never chosen
    h = int(obs.grid_shape[0, 0])
    w = int(obs.grid_shape[0, 1])
    op = ops.FLOOD_0 + 3
    if selection_format == "point":
        assert isinstance(dist, PointDistribution)
        cells = np.asarray(jax.nn.log_softmax(dist.cell_logits[op]))
        action = PointAction(op, h - 1, 0)
        expected = log_ops[op] + cells[(h - 1) * 8]
    elif selection_format == "bbox":
        assert isinstance(dist, BboxDistribution)
        first = np.asarray(jax.nn.log_softmax(dist.first_corner_logits[op]))
        second = np.asarray(jax.nn.log_softmax(dist.second_corner_logits[op]))
        action = BboxAction(op, 0, 1, h - 1, w - 1)
        expected = log_ops[op] + first[1] + second[(h - 1) * 8 + w - 1]
    else:
        assert isinstance(dist, MaskDistribution)
        selection = np.zeros((8, 8), bool)
        selection[0, :w] = True
        logits = np.asarray(dist.cell_logits[op], np.float64)
        inside = np.zeros((8, 8), bool)
        inside[:h, :w] = True
        per_cell = np.where(selection, -np.logaddexp(0, -logits), -np.logaddexp(0, logits))
        action = MaskAction(op, jnp.asarray(selection))
        expected = log_ops[op] + per_cell[inside].sum()
    assert float(dist.log_prob(action)) == pytest.approx(float(expected), rel=1e-4, abs=1e-4)
    # a selection-free operation (SUBMIT) counts the operation only
    submit = eqx.tree_at(lambda a: a.operation, action, jnp.asarray(ops.SUBMIT, jnp.int32))
    assert float(dist.log_prob(submit)) == pytest.approx(float(log_ops[ops.SUBMIT]), abs=1e-5)
    assert not USES_SELECTION[ops.SUBMIT] and USES_SELECTION[op]


def test_sampling_frequencies_match_probabilities(observations):
    config, obs = observations
    policy = make_policy(jax.random.key(4), PolicyConfig(channels=8), config.env_config())
    dist = _distribution(policy, _first(obs))
    count = 4000
    actions = jax.jit(jax.vmap(dist.sample))(jax.random.split(jax.random.key(5), count))
    probs = np.asarray(jax.nn.softmax(dist.operation_logits))
    freq = np.bincount(np.asarray(actions.operation), minlength=ops.NUM_OPERATIONS) / count
    np.testing.assert_allclose(freq, probs, atol=0.03)
    # first corner given the most frequent operation
    top = int(np.argmax(freq))
    chosen = np.asarray(actions.operation) == top
    corners = np.asarray(actions.r1 * 8 + actions.c1)[chosen]
    corner_probs = np.asarray(jax.nn.softmax(dist.first_corner_logits[top]))
    corner_freq = np.bincount(corners, minlength=64) / max(chosen.sum(), 1)
    np.testing.assert_allclose(corner_freq, corner_probs, atol=0.06)
    # sampled actions stay in the active area; log-probs agree with a Monte Carlo entropy
    h, w = (int(v) for v in obs.grid_shape[0])
    assert np.all(np.asarray(actions.r1) < h) and np.all(np.asarray(actions.c2) < w)
    log_probs = jax.jit(jax.vmap(dist.log_prob))(actions)
    assert float(-jnp.mean(log_probs)) == pytest.approx(float(dist.entropy()), rel=0.05)


def test_uniform_policy_is_uniform(observations):
    config, obs = observations
    dist = _distribution(UniformPolicy("bbox", (8, 8)), _first(obs))
    allowed = np.asarray(obs.allowed_operations[0])
    probs = np.asarray(jax.nn.softmax(dist.operation_logits))
    np.testing.assert_allclose(probs[allowed], 1.0 / allowed.sum(), rtol=1e-5)
    h, w = (int(v) for v in obs.grid_shape[0])
    corner = np.asarray(jax.nn.softmax(dist.first_corner_logits[0])).reshape(8, 8)
    np.testing.assert_allclose(corner[:h, :w], 1.0 / (h * w), rtol=1e-5)
    assert corner[h:, :].sum() + corner[:, w:].sum() < 1e-6


@pytest.mark.parametrize("selection_format", ["bbox", "mask"])
def test_a_tempered_policy_divides_every_logit_and_keeps_the_mode(observations, selection_format):
    config, obs = observations
    config = config.replace(selection_format=selection_format)
    policy = make_policy(jax.random.key(6), PolicyConfig(channels=8), config.env_config())
    one = _first(obs)
    base = _distribution(policy, one)
    hot = _distribution(TemperedPolicy(policy, 3.0), one)
    # every float leaf (operation and selection logits) divided by the temperature
    for cold_leaf, hot_leaf in zip(jax.tree.leaves(base), jax.tree.leaves(hot), strict=True):
        cold_leaf, hot_leaf = np.asarray(cold_leaf), np.asarray(hot_leaf)
        if cold_leaf.dtype == np.float32:
            np.testing.assert_allclose(hot_leaf, cold_leaf / 3.0, rtol=1e-6)
        else:  # the mask's active cells are no logits
            np.testing.assert_array_equal(hot_leaf, cold_leaf)
    log_ops = np.asarray(jax.nn.log_softmax(np.asarray(base.operation_logits, np.float64) / 3.0))
    action = base.mode()
    for hot_part, part in zip(jax.tree.leaves(hot.mode()), jax.tree.leaves(action), strict=True):
        np.testing.assert_array_equal(hot_part, part)  # the greedy action is unchanged
    allowed = np.asarray(one.allowed_operations)
    assert np.all(log_ops[~allowed] < -1e6)  # masked operations stay masked
    cold_ops = np.asarray(jax.nn.log_softmax(np.asarray(base.operation_logits, np.float64)))
    entropy = lambda log_p: -np.sum(np.exp(log_p) * log_p)  # noqa: E731
    assert entropy(log_ops) > entropy(cold_ops)  # flatter
    # a tempered policy is a policy: it reads another canvas and keeps its weights
    moved = TemperedPolicy(policy, 3.0).with_canvas((10, 10))
    assert isinstance(moved, TemperedPolicy) and moved.temperature == 3.0
    with pytest.raises(ValueError, match="temperature must be positive"):
        TemperedPolicy(policy, 0.0)


def test_whole_grid_prior_raises_exactly_the_whole_grid_corners_and_is_learned(observations):
    config, obs = observations
    config = config.replace(selection_format="bbox")
    env_config = config.env_config()
    plain = make_policy(jax.random.key(7), PolicyConfig(channels=8), env_config)
    primed = make_policy(
        jax.random.key(7), PolicyConfig(channels=8, whole_grid_prior=3.0), env_config
    )
    assert plain.whole_grid_corner_weights is None  # no new weights unless asked for
    one = _first(obs)
    h, w = (int(v) for v in one.grid_shape)
    base, raised = _distribution(plain, one), _distribution(primed, one)
    np.testing.assert_array_equal(raised.operation_logits, base.operation_logits)
    top_left, bottom_right = 0, (h - 1) * 8 + (w - 1)
    for raised_logits, base_logits, cell in (
        (raised.first_corner_logits, base.first_corner_logits, top_left),
        (raised.second_corner_logits, base.second_corner_logits, bottom_right),
    ):
        difference = np.asarray(raised_logits) - np.asarray(base_logits)
        np.testing.assert_allclose(difference[:, cell], 3.0, rtol=1e-6)  # every operation
        difference[:, cell] = 0.0
        assert np.all(difference == 0.0)  # no other cell moves
    # the whole-grid box of one operation is now likely, and the weights get a gradient
    box = BboxAction(jnp.int32(ops.FLOOD_0 + 3), 0, 0, h - 1, w - 1)
    assert float(raised.log_prob(box) - base.log_prob(box)) > 3.0  # each corner gains

    def box_log_prob(policy):
        return policy(one).log_prob(box)

    grads = eqx.filter_jit(eqx.filter_grad(box_log_prob))(primed)
    assert np.all(np.asarray(grads.whole_grid_corner_weights)[:, ops.FLOOD_0 + 3] > 0.0)
    point = make_policy(
        jax.random.key(7),
        PolicyConfig(channels=8, whole_grid_prior=3.0),
        config.replace(selection_format="point").env_config(),
    )
    assert point.whole_grid_corner_weights is None  # a point action has no box
    with pytest.raises(ValueError, match="whole_grid_prior"):
        PolicyConfig(whole_grid_prior=float("nan"))
