"""Behaviour cloning: the optional supervised warm start before GRPO (``bc_updates``).

With point actions the expert is :func:`paint_expert_action`, the on-device form of
:func:`jaxarc.data.generators.oracle_actions` for the paint families (``gen/easy``: recolour,
erase, fill_background, fill_holes): while the working grid differs from the target it
floods the first differing cell (row-major) with that cell's target colour, then submits.
From the start grid this is exactly the oracle's sequence (one flood per changed region,
first cell of each region, SUBMIT last); from any other grid it is still a shortest fix
when every changed region is a same-colour region, so it can also label states the policy
reached itself. With bbox actions it is
:func:`jaxarc.agents.grpo.state_expert.state_expert_action` (every ``gen/medium`` family:
whole-grid flips, rotations and moves when they reach the target, else the same flood as a
1x1 box).

:func:`make_bc_update` compiles one BC update: ``batch_tasks * group_size`` fresh episodes
played by the expert for ``max_episode_steps`` steps, then one gradient step on

    -mean log pi(expert action | obs)  +  aux_coef * per-cell cross-entropy of the policy's
    cell prediction against the episode's target grid

(the auxiliary term trains a learned cell predictor directly; the generator knows the
target). The reference policy is set to the updated policy, so GRPO's KL term starts from
the cloned policy.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray

from jaxarc.agents.grpo.loss import masked_mean
from jaxarc.agents.grpo.state_expert import state_expert_action
from jaxarc.agents.grpo.train_state import Metrics, TrainState, episode_constraint
from jaxarc.agents.grpo.train_step import gradient_norm
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.learned_incontext import cell_cross_entropy
from jaxarc.agents.model.policy import AbstractPolicy
from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.episode import source_episode_pair
from jaxarc.envs.functional import batch_reset
from jaxarc.envs.rollout import play
from jaxarc.envs.structured_actions import AbstractAction, action_class
from jaxarc.envs.types import ArcObservation, ArcState
from jaxarc.grid import operation_ids as ops


def paint_expert_action(
    grid: Int8[Array, "H W"], target: Int8[Array, "H W"], selection_format: str
) -> AbstractAction:
    """FLOOD (first differing cell, its target colour) or SUBMIT when nothing differs.

    ``selection_format`` ``"point"`` or ``"bbox"`` (a 1x1 box)."""
    differs = (grid != target) & (target >= 0)
    flat = jnp.argmax(differs.reshape(-1)).astype(jnp.int32)
    width = grid.shape[1]
    row, col = flat // width, flat % width
    any_wrong = jnp.any(differs)
    colour = jnp.maximum(target[row, col], 0).astype(jnp.int32)
    operation = jnp.where(any_wrong, ops.FLOOD_0 + colour, ops.SUBMIT).astype(jnp.int32)
    row = jnp.where(any_wrong, row, 0)
    col = jnp.where(any_wrong, col, 0)
    cls = action_class(selection_format)
    if selection_format == "point":
        return cls(operation=operation, row=row, col=col)
    if selection_format == "bbox":
        return cls(operation=operation, r1=row, c1=col, r2=row, c2=col)
    raise ValueError(f"the paint expert acts with point or bbox actions, not {selection_format!r}")


def episode_target_and_shape(
    state: ArcState, source: AbstractTaskSource, mode: str
) -> tuple[Int8[Array, "H W"], Int32[Array, " 2"]]:
    """The target grid of one environment's episode and its shape."""
    pair = source_episode_pair(
        source, state.episode_store, state.task_index, state.pair_index, mode
    )
    return pair.target_grid, pair.target_shape


def expert_action(state: ArcState, target, target_shape, selection_format: str) -> AbstractAction:
    """The expert's action for one state: the state expert with bbox actions, the paint
    expert with point actions."""
    if selection_format == "bbox":
        return state_expert_action(state.grid, state.grid_shape, target, target_shape)
    return paint_expert_action(state.grid, target, selection_format)


class ExpertBatch(eqx.Module):
    """Expert rollouts, leading axes ``[N, T]`` (targets ``[N]``)."""

    obs: ArcObservation
    actions: AbstractAction
    valid: Bool[Array, "N T"]
    targets: Int8[Array, "N H W"]
    success: Bool[Array, " N"]
    painted: Bool[Array, " N"]  # every valid expert action was a paint (FILL/FLOOD) or SUBMIT
    task_index: Int32[Array, " N"]  # the state's task index (a generator's family, if asked)


def expert_rollout(
    key: PRNGKeyArray,
    env_config: JaxArcConfig,
    source: AbstractTaskSource,
    episodes: int,
    steps: int,
    constrain: Callable = lambda tree: tree,
) -> ExpertBatch:
    """``episodes`` fresh episodes played by :func:`expert_action` for ``steps`` steps.

    ``constrain`` is applied to per-episode arrays (a sharding constraint over the episode
    axis, see :func:`~jaxarc.agents.grpo.train_state.episode_constraint`); it keeps values."""
    mode = env_config.environment.episode_mode
    fmt = env_config.action.selection_format
    states, obs = batch_reset(jax.random.split(key, episodes), env_config, source)
    targets, target_shapes = jax.vmap(lambda s: episode_target_and_shape(s, source, mode))(states)
    states, obs, targets, target_shapes = constrain((states, obs, targets, target_shapes))

    def act(states, obs, _):
        actions = jax.vmap(lambda s, t, ts: expert_action(s, t, ts, fmt))(
            states, targets, target_shapes
        )
        return actions, None

    states, _, record = play(
        states, obs, env_config, act, length=steps, constrain=constrain, unroll=True
    )
    record = record.batch_major()
    actions, valid = record.actions, record.valid
    paint = (actions.operation < ops.FLOOD_0 + 10) | (actions.operation == ops.SUBMIT)
    painted = jnp.all(paint | ~valid, axis=1)
    return ExpertBatch(
        record.obs, actions, valid, targets, states.success, painted, states.task_index
    )


def bc_loss(
    policy: AbstractPolicy, batch: ExpertBatch, aux_coef: float
) -> tuple[Float32[Array, ""], Metrics]:
    """Negative log-likelihood of the expert's actions plus ``aux_coef`` times the per-cell
    cross-entropy of the policy's cell prediction against the target, on the episodes the
    expert solved by painting only (the cell predictor predicts colours cell by cell; a
    rotated or moved target is not a per-cell colour rule, so it is left out)."""

    def episode(obs_t, actions_t, target):
        task = policy.encode_task(jax.tree.map(lambda x: x[0], obs_t))

        def one(o, a):
            dist = policy.act(o, task)
            return dist.log_prob(a), dist.mode().operation == a.operation

        log_probs, op_match = jax.vmap(one)(obs_t, actions_t)
        cell_loss, _ = cell_cross_entropy(task.cell_prediction, target)
        return log_probs, op_match, cell_loss

    log_probs, op_match, cell_loss = jax.vmap(episode)(batch.obs, batch.actions, batch.targets)
    nll = -masked_mean(log_probs, batch.valid)
    aux = masked_mean(cell_loss, batch.painted)
    loss = nll + aux_coef * aux
    metrics = {
        "loss": loss,
        "bc_nll": nll,
        "bc_cell_loss": aux,
        "bc_operation_accuracy": masked_mean(op_match.astype(jnp.float32), batch.valid),
    }
    return loss, metrics


def bc_step(
    policy: AbstractPolicy,
    opt_state,
    batch: ExpertBatch,
    optimizer: optax.GradientTransformation,
    aux_coef: float,
) -> tuple[AbstractPolicy, object, Metrics]:
    """One gradient step of :func:`bc_loss`."""
    grad_fn = eqx.filter_value_and_grad(lambda p: bc_loss(p, batch, aux_coef), has_aux=True)
    (_, metrics), grads = grad_fn(policy)
    params = eqx.filter(policy, eqx.is_inexact_array)
    with jax.numpy_dtype_promotion("standard"):
        updates, opt_state = optimizer.update(grads, opt_state, params)
    policy = eqx.apply_updates(policy, updates)
    return policy, opt_state, dict(metrics, grad_norm=gradient_norm(grads))


def make_bc_update(
    config,
    source: AbstractTaskSource,
    optimizer: optax.GradientTransformation,
    mesh: Mesh | None = None,
) -> Callable:
    """The compiled BC update ``TrainState -> (TrainState, metrics)`` of ``config``
    (a :class:`~jaxarc.agents.grpo.config.TrainConfig`).

    With a ``mesh`` it is sharded like the GRPO update: the expert episodes over the
    ``data`` axis (``batch_tasks * group_size`` of them; ``make_train`` checks that
    ``batch_tasks`` divides by the device count), parameters and optimiser state replicated,
    the gradient reduction inserted by the compiler."""
    env_config = config.env_config()
    episodes = config.batch_tasks * config.group_size
    constrain = episode_constraint(mesh)

    def update(state: TrainState) -> tuple[TrainState, Metrics]:
        key, rollout_key = jax.random.split(state.key)
        batch = expert_rollout(
            rollout_key, env_config, source, episodes, config.max_episode_steps, constrain
        )
        batch = constrain(batch)
        policy, opt_state, metrics = bc_step(
            state.policy, state.opt_state, batch, optimizer, config.bc_aux_coef
        )
        ref_policy = jax.tree.map(
            lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, policy
        )
        update_index = state.update_index + 1
        metrics = dict(
            metrics,
            stage_bc=jnp.float32(1.0),
            expert_success_rate=jnp.mean(batch.success.astype(jnp.float32)),
            episode_length=jnp.mean(jnp.sum(batch.valid, axis=1, dtype=jnp.float32)),
            update_index=update_index.astype(jnp.float32),
        )
        new_state = TrainState(policy, ref_policy, opt_state, key, update_index)
        if mesh is not None:
            new_state = eqx.filter_shard(new_state, NamedSharding(mesh, PartitionSpec()))
        return new_state, metrics

    return policy_jit(update, donate="all")
