"""The GRPO objective: clipped surrogate + beta * k3 KL to a reference - entropy bonus.

``TrainingBatchJAX`` is the batch pytree (leading axes ``[N, T]``: episodes x steps).
All averages are over valid steps (steps taken while the episode was running).

The G rollouts of a group play the same task, so the batch can carry a *task table*: one
observation per distinct task (``task_obs``, leading axis ``K``) and, per episode, the row
it plays (``task_index``). The policy's ``encode_task`` (the demonstration pairs: most of
the policy's FLOPs) then runs once per task instead of once per episode, and its gradient
is the sum over the task's episodes, as before.

Group rollouts also *start* identical: with ``shared_first_step`` the task table's row is
each episode's first observation, so the first step's action distribution is computed once
per task (``act`` on ``K`` rows instead of ``N``) and each episode reads its own action's
log-probability from it.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Float32, Int32

from jaxarc.agents.grpo.config import GRPOConfig
from jaxarc.agents.model.policy import AbstractPolicy
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.types import ArcObservation


class TrainingBatchJAX(eqx.Module):
    """One (mini)batch of rollout steps, leading axes ``[N, T]``."""

    obs: ArcObservation
    actions: AbstractAction
    old_log_probs: Float32[Array, "N T"]  # under the policy that collected the rollouts
    ref_log_probs: Float32[Array, "N T"]  # under the reference policy
    advantages: Float32[Array, "N T"]  # per step (outcome modes: the episode's, repeated)
    valid: Bool[Array, "N T"]
    # optional task table: one observation per distinct task (only its demonstration pairs
    # and input grid are read) and the row each episode plays; None: every episode's own
    task_obs: ArcObservation | None = None  # leading axis K
    task_index: Int32[Array, " N"] | None = None
    # static: every episode's first observation equals its task_obs row (group rollouts,
    # which start from copies of one reset state), so the first step is acted on once per row
    shared_first_step: bool = eqx.field(static=True, default=False)
    # episodes relabelled in hindsight (jaxarc.agents.grpo.hindsight): their actions were
    # sampled for another task, so their sampling and reference log-probabilities are taken
    # as the current ones (ratio 1, no clipping, no KL); None: no such episode
    relabelled: Bool[Array, " N"] | None = None

    def take(self, indices: Int32[Array, " M"]) -> TrainingBatchJAX:
        """The episodes ``indices`` (a minibatch). The task table is kept whole when it is
        no larger than the minibatch (encoding K tasks is then the cheaper way); otherwise
        each episode gets its own row."""
        part = lambda x: x[indices]  # noqa: E731
        episodes = jax.tree.map(
            part, (self.obs, self.actions, self.old_log_probs, self.ref_log_probs)
        )
        task_obs, task_index = self.task_obs, self.task_index
        if task_index is not None:
            task_index = task_index[indices]
            if indices.shape[0] < task_index_rows(self):
                task_obs = jax.tree.map(lambda x: x[task_index], task_obs)
                task_index = jnp.arange(indices.shape[0], dtype=jnp.int32)
        return TrainingBatchJAX(
            *episodes,
            advantages=self.advantages[indices],
            valid=self.valid[indices],
            task_obs=task_obs,
            task_index=task_index,
            shared_first_step=self.shared_first_step,
            relabelled=None if self.relabelled is None else self.relabelled[indices],
        )


def task_index_rows(batch: TrainingBatchJAX) -> int:
    """``K``, the rows of the batch's task table (0 without one)."""
    if batch.task_obs is None:
        return 0
    return jax.tree.leaves(batch.task_obs)[0].shape[0]


def group_task_table(
    obs: ArcObservation, group_size: int
) -> tuple[ArcObservation, Int32[Array, " N"]]:
    """``(task_obs, task_index)`` for group rollouts (``N = K * G`` episodes, groups
    contiguous and starting identical): each group's first observation, and ``n // G``."""
    episodes = jax.tree.leaves(obs)[0].shape[0]
    task_obs = jax.tree.map(lambda x: x[::group_size, 0], obs)
    return task_obs, jnp.arange(episodes, dtype=jnp.int32) // group_size


def k3_kl(
    log_probs: Float[Array, "..."], ref_log_probs: Float[Array, "..."]
) -> Float[Array, "..."]:
    """The k3 estimator of KL(policy || reference): ``exp(d) - d - 1`` with ``d = ref - logp``."""
    delta = ref_log_probs - log_probs
    return jnp.exp(delta) - delta - 1.0


def clipped_surrogate(
    ratio: Float[Array, "..."], advantages: Float[Array, "..."], eps_low: float, eps_high: float
) -> Float[Array, "..."]:
    """``min(ratio * A, clip(ratio, 1 - eps_low, 1 + eps_high) * A)``."""
    clipped = jnp.clip(ratio, 1.0 - eps_low, 1.0 + eps_high)
    return jnp.minimum(ratio * advantages, clipped * advantages)


def masked_mean(values: Float[Array, "..."], mask: Bool[Array, "..."]) -> Float32[Array, ""]:
    weights = mask.astype(jnp.float32)
    return jnp.sum(values * weights) / jnp.maximum(jnp.sum(weights), 1.0)


def policy_log_probs_and_entropy(
    policy: AbstractPolicy,
    obs: ArcObservation,
    actions: AbstractAction,
    task_obs: ArcObservation | None = None,
    task_index: Int32[Array, " N"] | None = None,
    shared_first_step: bool = False,
) -> tuple[Float32[Array, "N T"], Float32[Array, "N T"]]:
    """Log-probabilities of ``actions`` and entropies, for every ``[N, T]`` step.

    The demonstration pairs are encoded once per row of the task table (``task_obs``,
    ``task_index``: see :class:`TrainingBatchJAX`), or without one once per episode (from
    its first step). With ``shared_first_step`` (static; needs the table) the first step's
    distribution is computed once per row: the rows must be the episodes' first observations.
    """
    if task_obs is None:
        tasks = jax.vmap(policy.encode_task)(jax.tree.map(lambda x: x[:, 0], obs))
    else:
        encoded = jax.vmap(policy.encode_task)(task_obs)
        tasks = jax.tree.map(lambda x: x[task_index], encoded)

    def episode(obs_t, actions_t, task):
        def one(o, a):
            dist = policy.act(o, task)
            return dist.log_prob(a), dist.entropy()

        return jax.vmap(one)(obs_t, actions_t)

    if not shared_first_step or task_obs is None:
        return jax.vmap(episode)(obs, actions, tasks)
    first_dists = jax.vmap(policy.act)(task_obs, encoded)  # K distributions
    first_entropy = jax.vmap(lambda d: d.entropy())(first_dists)[task_index]
    first_log_prob = jax.vmap(lambda k, a: first_dists.row(k).log_prob(a))(
        task_index, jax.tree.map(lambda x: x[:, 0], actions)
    )
    rest = jax.tree.map(lambda x: x[:, 1:], (obs, actions))
    log_probs, entropy = jax.vmap(episode)(*rest, tasks)
    return (
        jnp.concatenate([first_log_prob[:, None], log_probs], axis=1),
        jnp.concatenate([first_entropy[:, None], entropy], axis=1),
    )


def grpo_loss(
    policy: AbstractPolicy, batch: TrainingBatchJAX, config: GRPOConfig
) -> tuple[Float32[Array, ""], dict[str, Float32[Array, ""]]]:
    """The loss to minimise and its metrics (arrays)."""
    log_probs, entropy = policy_log_probs_and_entropy(
        policy,
        batch.obs,
        batch.actions,
        batch.task_obs,
        batch.task_index,
        batch.shared_first_step,
    )
    old_log_probs, ref_log_probs = batch.old_log_probs, batch.ref_log_probs
    if batch.relabelled is not None:  # off-policy steps: ratio 1 and no KL (see the field)
        current = jax.lax.stop_gradient(log_probs)
        old_log_probs = jnp.where(batch.relabelled[:, None], current, old_log_probs)
        ref_log_probs = jnp.where(batch.relabelled[:, None], current, ref_log_probs)
    log_ratio = log_probs - old_log_probs
    ratio = jnp.exp(log_ratio)
    advantages = batch.advantages
    surrogate = masked_mean(
        clipped_surrogate(ratio, advantages, config.eps_low, config.eps_high), batch.valid
    )
    kl = masked_mean(k3_kl(log_probs, ref_log_probs), batch.valid)
    mean_entropy = masked_mean(entropy, batch.valid)
    loss = -surrogate + config.beta * kl - config.entropy_coef * mean_entropy
    extra = {}
    if config.in_context_coef > 0:  # static: no work when off
        if batch.task_obs is None:
            first_obs = jax.tree.map(lambda x: x[:, 0], batch.obs)
            in_context = jnp.mean(jax.vmap(policy.in_context_loss)(first_obs))
        else:  # the same mean over episodes, each task's loss computed once
            per_episode = jax.vmap(policy.in_context_loss)(batch.task_obs)[batch.task_index]
            if batch.relabelled is None or not config.hindsight_in_context:
                in_context = jnp.mean(per_episode)
            else:  # the demonstrations of the environment's own tasks only
                in_context = masked_mean(per_episode, ~batch.relabelled)
        loss = loss + config.in_context_coef * in_context
        extra["in_context_loss"] = in_context
    clipped = (ratio < 1.0 - config.eps_low) | (ratio > 1.0 + config.eps_high)
    metrics = {
        "loss": loss,
        "surrogate": surrogate,
        "kl": kl,
        "entropy": mean_entropy,
        "clip_fraction": masked_mean(clipped.astype(jnp.float32), batch.valid),
        "ratio_mean": masked_mean(ratio, batch.valid),
        "approx_kl_old": masked_mean(k3_kl(log_probs, old_log_probs), batch.valid),
        **extra,
    }
    return loss, metrics
