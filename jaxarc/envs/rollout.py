"""Playing batched episodes: the one rollout loop of the package.

:func:`play` steps a batch of environments with ``batch_step`` inside ``lax.scan``, asking an
``act`` function for the actions at every step. Training (group rollouts, the behaviour-
cloning expert), evaluation, the benchmarks and the examples all play episodes through it;
what differs between them is only ``act`` (sample a policy, take its mode, ask an expert,
draw random actions) and what they keep of the recorded :class:`Steps`.

``act(states, obs, x) -> (actions, extra)`` sees the batch's states and observations and the
step's slice ``x`` of ``xs`` (typically per-step keys; ``None`` when ``xs`` is ``None``) and
returns the batch's actions and any pytree ``extra`` to record (log-probabilities, ...).
Inside ``jit`` whatever the caller does not use of :class:`Steps` (e.g. the observations) is
removed by dead-code elimination, so recording it costs nothing then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, PyTree

from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.functional import batch_step
from jaxarc.envs.structured_actions import AbstractAction
from jaxarc.envs.types import ArcObservation, ArcState

Act = Callable[[ArcState, ArcObservation, Any], tuple[AbstractAction, PyTree]]


class Steps(eqx.Module):
    """What :func:`play` records at each step, leading axes ``[T, N]`` (time-major).

    ``obs`` is the observation each action was chosen from; ``valid`` says whether the
    episode was still running when the action was taken (the environment freezes finished
    episodes and pays 0 afterwards); ``extra`` is what ``act`` returned with the actions.
    """

    obs: ArcObservation
    actions: AbstractAction
    rewards: Float32[Array, "T N"]
    valid: Bool[Array, "T N"]
    extra: PyTree

    def batch_major(self) -> Steps:
        """The same record with leading axes ``[N, T]``."""
        return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), self)


def _identity(tree: PyTree) -> PyTree:
    return tree


def play(
    states: ArcState,
    obs: ArcObservation,
    config: JaxArcConfig,
    act: Act,
    xs: PyTree = None,
    *,
    length: int | None = None,
    constrain: Callable[[PyTree], PyTree] = _identity,
    unroll: int | bool = 1,
    first_act: Act | None = None,
) -> tuple[ArcState, ArcObservation, Steps]:
    """Play the batch ``states`` / ``obs`` (leading axis ``N``) for one step per item of
    ``xs`` (or ``length`` steps when ``xs`` is ``None``).

    Args:
        states: the batch's states (from ``batch_reset``).
        obs: the batch's current observations.
        config: the environment's static config.
        act: ``(states, obs, x) -> (actions, extra)``, the batch's actions for a step.
        xs: per-step inputs scanned over (leading axis ``T``), e.g. step keys.
        length: the number of steps when ``xs`` is ``None``.
        constrain: applied to ``(states, obs)`` after every step (e.g. a sharding
            constraint over the batch axis); it must not change values.
        unroll: ``lax.scan``'s unroll (``True``: fully; XLA:CPU runs convolutions inside
            while loops several times slower, so policies with convolutions unroll).
        first_act: ``act`` for the first step only (e.g. one that knows the batch starts
            from copies of a few states); ``None``: ``act`` for every step.

    Returns:
        ``(final states, last observations, steps)``; ``steps`` is time-major ``[T, N]``.
    """

    def step_with(act):
        def one_step(carry, x):
            states, obs = carry
            actions, extra = act(states, obs, x)
            valid = ~(states.terminated | states.truncated)
            states, next_obs, rewards, _, _ = batch_step(states, actions, config)
            states, next_obs = constrain((states, next_obs))
            return (states, next_obs), Steps(obs, actions, rewards, valid, extra)

        return one_step

    if first_act is None:
        (states, obs), steps = jax.lax.scan(
            step_with(act), (states, obs), xs, length=length, unroll=unroll
        )
        return states, obs, steps
    rest_length = None if length is None else length - 1
    first_x, rest_xs = (None, None) if xs is None else (_item(xs, 0), _tail(xs))
    carry, first = step_with(first_act)((states, obs), first_x)
    (states, obs), rest = jax.lax.scan(
        step_with(act), carry, rest_xs, length=rest_length, unroll=unroll
    )
    steps = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, rest)
    return states, obs, steps


def _item(tree: PyTree, index: int) -> PyTree:
    return jax.tree.map(lambda x: x[index], tree)


def _tail(tree: PyTree) -> PyTree:
    return jax.tree.map(lambda x: x[1:], tree)
