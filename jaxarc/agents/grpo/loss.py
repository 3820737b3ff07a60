"""The GRPO objective: clipped surrogate + beta * k3 KL to a reference - entropy bonus.

``TrainingBatchJAX`` is the batch pytree (leading axes ``[N, T]``: episodes x steps).
All averages are over valid steps (steps taken while the episode was running).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Float32

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
    policy: AbstractPolicy, obs: ArcObservation, actions: AbstractAction
) -> tuple[Float32[Array, "N T"], Float32[Array, "N T"]]:
    """Log-probabilities of ``actions`` and entropies, for every ``[N, T]`` step.

    The demonstration pairs are encoded once per episode (from its first step).
    """

    def episode(obs_t, actions_t):
        task = policy.encode_task(jax.tree.map(lambda x: x[0], obs_t))

        def one(o, a):
            dist = policy.act(o, task)
            return dist.log_prob(a), dist.entropy()

        return jax.vmap(one)(obs_t, actions_t)

    return jax.vmap(episode)(obs, actions)


def grpo_loss(
    policy: AbstractPolicy, batch: TrainingBatchJAX, config: GRPOConfig
) -> tuple[Float32[Array, ""], dict[str, Float32[Array, ""]]]:
    """The loss to minimise and its metrics (arrays)."""
    log_probs, entropy = policy_log_probs_and_entropy(policy, batch.obs, batch.actions)
    log_ratio = log_probs - batch.old_log_probs
    ratio = jnp.exp(log_ratio)
    advantages = batch.advantages
    surrogate = masked_mean(
        clipped_surrogate(ratio, advantages, config.eps_low, config.eps_high), batch.valid
    )
    kl = masked_mean(k3_kl(log_probs, batch.ref_log_probs), batch.valid)
    mean_entropy = masked_mean(entropy, batch.valid)
    loss = -surrogate + config.beta * kl - config.entropy_coef * mean_entropy
    clipped = (ratio < 1.0 - config.eps_low) | (ratio > 1.0 + config.eps_high)
    metrics = {
        "loss": loss,
        "surrogate": surrogate,
        "kl": kl,
        "entropy": mean_entropy,
        "clip_fraction": masked_mean(clipped.astype(jnp.float32), batch.valid),
        "ratio_mean": masked_mean(ratio, batch.valid),
        "approx_kl_old": masked_mean(k3_kl(log_probs, batch.old_log_probs), batch.valid),
    }
    return loss, metrics
