"""Group-relative advantages: each rollout's return compared with the others of its group.

Outcome modes (one advantage per rollout, shared by its steps): ``group``, ``none``, ``rloo``.
The ``process`` mode is GRPO with process supervision (Shao et al. 2024, DeepSeekMath,
section 4.1.3): every step's reward is normalised by the mean and standard deviation of all
valid step rewards of its group, and a step's advantage is the sum of the normalised rewards
from that step to the episode's end.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

ADVANTAGE_EPS = 1e-6


def equal_groups(returns: Float[Array, "B G"]) -> Bool[Array, " B"]:
    """Groups whose returns are all identical (they carry no learning signal)."""
    return jnp.all(returns == returns[:, :1], axis=1)


def compute_advantages(
    returns: Float[Array, "B G"], mode: str = "group", eps: float = ADVANTAGE_EPS
) -> tuple[Float[Array, "B G"], Float[Array, ""]]:
    """Advantages per rollout and the fraction of all-equal groups.

    Modes: ``"group"`` ``(R - mean) / (std + eps)``; ``"none"`` ``R - mean`` (Dr. GRPO);
    ``"rloo"`` ``R - mean of the other G - 1 rollouts``. All-equal groups get exactly 0.
    """
    returns = returns.astype(jnp.float32)
    group_size = returns.shape[1]
    mean = jnp.mean(returns, axis=1, keepdims=True)
    if mode == "group":
        std = jnp.std(returns, axis=1, keepdims=True)
        advantages = (returns - mean) / (std + jnp.float32(eps))
    elif mode == "none":
        advantages = returns - mean
    elif mode == "rloo":
        if group_size < 2:
            raise ValueError("rloo advantages need a group size of at least 2")
        others = (jnp.sum(returns, axis=1, keepdims=True) - returns) / jnp.float32(group_size - 1)
        advantages = returns - others
    else:
        raise ValueError(f"unknown advantage mode {mode!r}; use 'group', 'none' or 'rloo'")
    equal = equal_groups(returns)
    advantages = jnp.where(equal[:, None], jnp.float32(0.0), advantages)
    return advantages, jnp.mean(equal.astype(jnp.float32))


def compute_process_advantages(
    rewards: Float[Array, "B G T"], valid: Bool[Array, "B G T"], eps: float = ADVANTAGE_EPS
) -> tuple[Float[Array, "B G T"], Float[Array, ""]]:
    """Per-step advantages (``process`` mode) and the fraction of all-equal groups.

    ``r~ = (r - mean_group) / (std_group + eps)`` over the group's valid steps; the advantage
    of step ``t`` is ``sum_{t' >= t} r~_{t'}`` (0 on invalid steps). Groups whose valid step
    rewards are all equal get 0.
    """
    rewards = rewards.astype(jnp.float32)
    weights = valid.astype(jnp.float32)
    count = jnp.maximum(jnp.sum(weights, axis=(1, 2), keepdims=True), 1.0)
    mean = jnp.sum(rewards * weights, axis=(1, 2), keepdims=True) / count
    var = jnp.sum(jnp.square(rewards - mean) * weights, axis=(1, 2), keepdims=True) / count
    std = jnp.sqrt(var)
    normalised = jnp.where(valid, (rewards - mean) / (std + jnp.float32(eps)), 0.0)
    advantages = jnp.flip(jnp.cumsum(jnp.flip(normalised, -1), axis=-1), -1)
    advantages = jnp.where(valid, advantages, 0.0)
    equal = std[:, 0, 0] <= 0.0
    advantages = jnp.where(equal[:, None, None], jnp.float32(0.0), advantages)
    return advantages, jnp.mean(equal.astype(jnp.float32))
