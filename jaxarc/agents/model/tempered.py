"""A policy that samples at a temperature: every logit of its action distribution divided by
``temperature``.

A temperature above 1 flattens the distribution, so the rollouts of a GRPO group differ
where the policy is confident; below 1 sharpens it. The tempered policy is a policy of its
own: its rollouts' log-probabilities, the loss's ratios and the entropy bonus are all taken
under it, so GRPO stays on-policy. The greedy action (the mode) does not change with the
temperature. :attr:`TemperedPolicy.inner` is the policy at temperature 1, with the same
weights.
"""

from __future__ import annotations

import equinox as eqx
import jax
from jaxtyping import Array, Float32

from jaxarc.agents.model.distributions import ActionDistribution
from jaxarc.agents.model.policy import AbstractPolicy, TaskEncoding
from jaxarc.envs.types import ArcObservation


def tempered(distribution: ActionDistribution, temperature: float) -> ActionDistribution:
    """``distribution`` with every logit divided by ``temperature`` (masked logits stay
    masked: they are large and negative, and remain so)."""
    scale = 1.0 / float(temperature)
    return jax.tree.map(lambda x: x * scale if eqx.is_inexact_array(x) else x, distribution)


class TemperedPolicy(AbstractPolicy):
    """``inner``'s action distributions at ``temperature`` (a positive float, static)."""

    inner: AbstractPolicy
    temperature: float = eqx.field(static=True)

    def __check_init__(self) -> None:
        if not float(self.temperature) > 0.0:
            raise ValueError(f"temperature must be positive, got {self.temperature!r}")

    def with_canvas(self, canvas: tuple[int, int]) -> TemperedPolicy:
        return TemperedPolicy(self.inner.with_canvas(canvas), self.temperature)

    def encode_task(self, obs: ArcObservation) -> TaskEncoding:
        return self.inner.encode_task(obs)

    def act(self, obs: ArcObservation, task: TaskEncoding) -> ActionDistribution:
        return tempered(self.inner.act(obs, task), self.temperature)

    def in_context_loss(self, obs: ArcObservation) -> Float32[Array, ""]:
        return self.inner.in_context_loss(obs)
