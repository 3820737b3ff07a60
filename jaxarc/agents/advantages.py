"""Group-relative advantages: each rollout's return compared with the others of its group."""

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
