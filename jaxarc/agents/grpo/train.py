"""``make_train(config, mesh=None) -> (init, update)``: one GRPO iteration compiled whole.

``update(train_state)`` plays ``batch_tasks x group_size`` group rollouts, computes group
advantages and the reference log-probabilities, runs ``epochs`` epochs of ``minibatches``
surrogate steps, refreshes the reference policy every ``ref_refresh_every`` updates and
returns the new state and a dict of scalar metric arrays.

Devices: with a ``mesh`` (one axis ``"data"``), the episode axis of the rollouts is sharded
over it (``batch_tasks`` must be divisible by the device count, so groups, which are
contiguous, never straddle devices); parameters and optimiser state are replicated and the
compiler inserts the gradient reductions. The behaviour-cloning stage (``bc_updates``) is
sharded the same way (its expert episodes over ``data``). Without a mesh nothing is
constrained.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray, PyTree

from jaxarc.agents.grpo.advantages import compute_advantages, compute_process_advantages
from jaxarc.agents.grpo.behaviour_cloning import make_bc_update
from jaxarc.agents.grpo.config import GRPOConfig, TrainConfig
from jaxarc.agents.grpo.hindsight import HindsightGroups, hindsight_groups
from jaxarc.agents.grpo.loss import (
    TrainingBatchJAX,
    group_task_table,
    policy_log_probs_and_entropy,
    task_index_rows,
)
from jaxarc.agents.grpo.rollout import Trajectories, evaluate_success, group_rollout
from jaxarc.agents.grpo.train_state import Metrics, TrainState, episode_constraint
from jaxarc.agents.grpo.train_step import make_optimizer, surrogate_step
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.policy import AbstractPolicy, make_policy
from jaxarc.data.source import AbstractTaskSource


def load_task_source(config: TrainConfig) -> AbstractTaskSource:
    """The task source named by ``config.source`` (a ``gen/...`` generator or a bank)."""
    if config.source.startswith("gen/"):
        from jaxarc.data.generators import make_generator

        return make_generator(config.source, canvas=(config.canvas, config.canvas))
    from jaxarc.data import load_source

    return load_source(config.source, canvas_shape=(config.canvas, config.canvas))


def make_train(
    config: TrainConfig, mesh: Mesh | None = None
) -> tuple[
    Callable[[PRNGKeyArray], TrainState], Callable[[TrainState], tuple[TrainState, Metrics]]
]:
    """``(init, update)`` for ``config``; ``update`` is compiled once and reused."""
    env_config = config.env_config()
    source = load_task_source(config)
    optimizer = make_optimizer(config)
    if mesh is not None:
        devices = mesh.shape["data"]
        if config.batch_tasks % devices:
            raise ValueError(
                f"batch_tasks={config.batch_tasks} must be divisible by the {devices} devices "
                "of the mesh (groups are never split across devices)"
            )
    constrain = episode_constraint(mesh)
    replicated = None if mesh is None else NamedSharding(mesh, P())

    def init(key: PRNGKeyArray) -> TrainState:
        policy_key, state_key = jax.random.split(key)
        policy = make_policy(policy_key, config.policy, env_config, source.max_demos)
        with jax.numpy_dtype_promotion("standard"):
            opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
        # the reference gets its own buffers: the update donates both
        ref_policy = jax.tree.map(
            lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, policy
        )
        state = TrainState(policy, ref_policy, opt_state, state_key, jnp.int32(0))
        if replicated is not None:
            state = eqx.filter_shard(state, replicated)
        return state

    def update(state: TrainState) -> tuple[TrainState, Metrics]:
        return grpo_update(state, config, source, optimizer, constrain)

    if replicated is None:
        compiled_update = policy_jit(update, donate="all")
    else:

        def sharded_update(state):
            new_state, metrics = update(state)
            return eqx.filter_shard(new_state, replicated), metrics

        compiled_update = policy_jit(sharded_update, donate="all")
    if not config.bc_updates:
        return init, compiled_update
    bc_update = make_bc_update(config, source, optimizer, mesh)

    def staged_update(state: TrainState) -> tuple[TrainState, Metrics]:
        """BC for the first ``config.bc_updates`` updates, GRPO after (by the state's index)."""
        if int(state.update_index) < config.bc_updates:
            return bc_update(state)
        state, metrics = compiled_update(state)
        return state, dict(metrics, stage_bc=jnp.float32(0.0))

    return init, staged_update


def grpo_update(
    state: TrainState,
    config: TrainConfig,
    source: AbstractTaskSource,
    optimizer: optax.GradientTransformation,
    constrain: Callable = lambda tree: tree,
    task_index: Int32[Array, ""] | None = None,
) -> tuple[TrainState, Metrics]:
    """One GRPO iteration of ``state`` (traceable; :func:`make_train` compiles it).

    ``task_index`` (traced) plays every rollout of the update on that task of the bank
    ``source`` (test-time training on one task); ``None`` samples a task per group.
    """
    grpo = config.grpo
    key, rollout_key, shuffle_key = jax.random.split(state.key, 3)
    ref_policy = state.ref_policy if grpo.beta > 0 else None
    batch, trajectories, batch_metrics = collect_batch(
        state.policy, ref_policy, rollout_key, config, source, constrain, task_index
    )
    batch = constrain(batch)
    policy, ref_policy, opt_state, step_metrics = optimise_on_batch(
        state, batch, shuffle_key, grpo, optimizer, constrain
    )
    update_index = state.update_index + 1
    metrics = {name: jnp.mean(values) for name, values in step_metrics.items()}
    metrics.update(
        first_epoch_clip_fraction=jnp.mean(step_metrics["clip_fraction"][0]),
        first_epoch_ratio=jnp.mean(step_metrics["ratio_mean"][0]),
        mean_return=jnp.mean(trajectories.returns),
        success_rate=jnp.mean(trajectories.success.astype(jnp.float32)),
        **batch_metrics,
        episode_length=jnp.mean(trajectories.lengths),
        env_steps=jnp.float32(config.batch_tasks * config.group_size * config.max_episode_steps),
        update_index=update_index.astype(jnp.float32),
    )
    new_state = TrainState(policy, ref_policy, opt_state, key, update_index)
    return new_state, metrics


def optimise_on_batch(
    state: TrainState,
    batch: TrainingBatchJAX,
    shuffle_key: PRNGKeyArray,
    grpo: GRPOConfig,
    optimizer: optax.GradientTransformation,
    constrain: Callable = lambda tree: tree,
) -> tuple[AbstractPolicy, AbstractPolicy, PyTree, dict[str, Array]]:
    """``grpo.epochs`` epochs of ``grpo.minibatches`` surrogate steps on ``batch`` (each
    epoch in its own shuffled order) from ``state``'s policy and optimiser state, then the
    reference refreshed every ``grpo.ref_refresh_every`` updates: ``(policy, reference,
    optimiser state, per-step metrics [epochs, minibatches] by name)``. Traceable; every
    GRPO learner of the package (the trainer's update, the program network's) trains
    through it."""
    episodes = batch.valid.shape[0]
    minibatch = episodes // grpo.minibatches
    params, static = eqx.partition(state.policy, eqx.is_array)
    # the epochs x minibatches steps unrolled in Python: a lax.scan (even unroll=True)
    # leaves a while loop, and XLA:CPU runs the convolutions' gradients inside while
    # loops through a generic path ~30x slower than its YNNPACK kernels (measured on the
    # quick preset's trunk: 442 ms vs 15 ms per step)
    opt_state = state.opt_state
    step_metrics = []
    for epoch_key in jax.random.split(shuffle_key, grpo.epochs):
        order = jax.random.permutation(epoch_key, episodes).reshape(grpo.minibatches, minibatch)
        epoch_metrics = []
        for indices in order:
            part = constrain(batch.take(indices))
            policy, opt_state, metrics = surrogate_step(
                eqx.combine(params, static), opt_state, part, optimizer, grpo
            )
            params = eqx.filter(policy, eqx.is_array)
            epoch_metrics.append(metrics)
        step_metrics.append(epoch_metrics)
    policy = eqx.combine(params, static)
    refresh = (state.update_index + 1) % grpo.ref_refresh_every == 0
    ref_policy = jax.tree.map(
        lambda new, old: jnp.where(refresh, new, old),
        eqx.filter(policy, eqx.is_array),
        eqx.filter(state.ref_policy, eqx.is_array),
    )
    ref_policy = eqx.combine(ref_policy, state.ref_policy)
    # [epochs, minibatches] per metric, as the scans gave
    return policy, ref_policy, opt_state, _stack([_stack(rows) for rows in step_metrics])


def _stack(rows: list) -> Metrics:
    """Metric dicts (or dicts of stacked metrics) stacked along a new leading axis."""
    return jax.tree.map(lambda *values: jnp.stack(values), *rows)


def collect_batch(
    policy: AbstractPolicy,
    ref_policy: AbstractPolicy | None,
    key: PRNGKeyArray,
    config: TrainConfig,
    source: AbstractTaskSource,
    constrain: Callable = lambda tree: tree,
    task_index: Int32[Array, ""] | None = None,
) -> tuple[TrainingBatchJAX, Trajectories, Metrics]:
    """One GRPO rollout batch: ``(batch, trajectories, metrics)``.

    B x G group rollouts of ``policy`` and their per-group advantages; the reference
    log-probabilities come from ``ref_policy`` (``None``: the sampling log-probabilities,
    i.e. no KL term). The batch carries the task table of the B groups (each task encoded
    once per loss evaluation, not once per episode). With ``config.hindsight_groups = K``
    (``grpo.hindsight_fraction`` of the B groups) the batch also holds K hindsight groups
    (:mod:`jaxarc.agents.grpo.hindsight`) after the B groups. ``metrics``:
    ``equal_group_fraction`` (groups whose rewards carry no signal) and, with hindsight
    groups, ``hindsight_success_rate`` and ``hindsight_donor_fraction``. ``task_index``: see
    :func:`grpo_update`.
    """
    env_config, reward_params = config.env_config(), config.reward_params()
    trajectories = group_rollout(
        policy,
        key,
        env_config,
        source,
        reward_params,
        config.batch_tasks,
        config.group_size,
        config.max_episode_steps,
        constrain=constrain,
        task_index=task_index,
    )
    advantages, equal_fraction = group_advantages(trajectories.rewards, trajectories.valid, config)
    task_obs, task_index = group_task_table(trajectories.obs, config.group_size)
    if ref_policy is not None:
        ref_log_probs, _ = policy_log_probs_and_entropy(
            ref_policy,
            trajectories.obs,
            trajectories.actions,
            task_obs,
            task_index,
            shared_first_step=True,
        )
    else:
        ref_log_probs = trajectories.log_probs
    batch = TrainingBatchJAX(
        obs=trajectories.obs,
        actions=trajectories.actions,
        old_log_probs=trajectories.log_probs,
        ref_log_probs=jax.lax.stop_gradient(ref_log_probs),
        advantages=advantages,
        valid=trajectories.valid,
        task_obs=task_obs,
        task_index=task_index,
        shared_first_step=True,  # the G rollouts of a group start from one reset state
    )
    metrics = {"equal_group_fraction": equal_fraction}
    num_relabelled = config.hindsight_groups
    if num_relabelled:  # static
        groups = hindsight_groups(
            jax.random.fold_in(key, 1),  # the rollouts' key stream is left as it was
            trajectories,
            task_obs,
            num_relabelled,
            config.group_size,
            env_config,
            reward_params,
            failed_only=config.grpo.hindsight_failed_only,
        )
        batch = with_hindsight_groups(batch, groups, config)
        metrics.update(
            hindsight_success_rate=jnp.mean(groups.success.astype(jnp.float32)),
            hindsight_donor_fraction=jnp.mean(groups.has_donor.astype(jnp.float32)),
        )
    return batch, trajectories, metrics


def group_advantages(
    rewards: Float32[Array, "N T"], valid: Bool[Array, "N T"], config: TrainConfig
) -> tuple[Float32[Array, "N T"], Float32[Array, ""]]:
    """Per-step advantages of group rollouts (``N = K * G``, groups contiguous) in the
    config's mode, and the fraction of all-equal groups."""
    steps = rewards.shape[-1]
    groups = (rewards.shape[0] // config.group_size, config.group_size)
    if config.grpo.advantage == "process":
        advantages, equal_fraction = compute_process_advantages(
            rewards.reshape(*groups, steps), valid.reshape(*groups, steps)
        )
        return advantages.reshape(-1, steps), equal_fraction
    returns = jnp.sum(jnp.where(valid, rewards, 0.0), axis=1).reshape(groups)
    advantages, equal_fraction = compute_advantages(returns, config.grpo.advantage)
    return jnp.broadcast_to(advantages.reshape(-1, 1), valid.shape), equal_fraction


def with_hindsight_groups(
    batch: TrainingBatchJAX, groups: HindsightGroups, config: TrainConfig
) -> TrainingBatchJAX:
    """``batch`` (B groups) followed by the K hindsight groups made from its first K: the
    same recorded steps, new task-table rows, advantages from the re-scored rewards (0 for
    groups without a donor), marked ``relabelled``."""
    episodes = groups.rewards.shape[0]
    valid = batch.valid[:episodes]
    advantages, _ = group_advantages(groups.rewards, valid, config)
    used = jnp.repeat(groups.has_donor, config.group_size)
    advantages = jnp.where(used[:, None], advantages, 0.0)
    rows = task_index_rows(batch)
    first = lambda x: x[:episodes]  # noqa: E731
    extend = lambda a, b: jnp.concatenate([a, b])  # noqa: E731
    steps = jax.tree.map(first, (batch.obs, batch.actions, batch.old_log_probs))
    obs, actions, old_log_probs = jax.tree.map(
        extend, (batch.obs, batch.actions, batch.old_log_probs), steps
    )
    relabelled = jnp.arange(batch.valid.shape[0] + episodes) >= batch.valid.shape[0]
    return TrainingBatchJAX(
        obs=obs,
        actions=actions,
        old_log_probs=old_log_probs,
        ref_log_probs=extend(batch.ref_log_probs, first(batch.ref_log_probs)),
        advantages=extend(batch.advantages, advantages),
        valid=extend(batch.valid, valid),
        task_obs=jax.tree.map(extend, batch.task_obs, groups.task_obs),
        task_index=extend(batch.task_index, rows + first(batch.task_index)),
        shared_first_step=batch.shared_first_step,
        relabelled=relabelled,
    )


def make_evaluator(
    config: TrainConfig, num_tasks: int | None = None, greedy: bool = True, details: bool = False
) -> Callable[[AbstractPolicy, PRNGKeyArray], Float32[Array, ""] | Metrics]:
    """A compiled ``(policy, key) -> success rate`` on fresh held-out episodes; with
    ``details`` it returns ``{"success", "similarity", "length"}`` (final similarity of the
    grid to the target, episode length) instead.

    Episodes are played in eval mode (the test pair; all demonstration pairs shown) with
    ``max_episode_steps`` steps, acting greedily (``greedy``) or by sampling.
    """
    env_config = config.env_config(episode_mode="eval")
    source = load_task_source(config)
    count = num_tasks or config.eval_tasks

    @policy_jit
    def evaluate(policy, key):
        result = evaluate_success(
            policy, key, env_config, source, count, config.max_episode_steps, greedy=greedy
        )
        return result if details else result["success"]

    return evaluate
