"""The surrogate train step: loss, gradients (global-norm clipped in the optimiser), update.

* :func:`surrogate_step` is the plain function (traceable, also runs eagerly);
* :func:`create_jax_surrogate_train_step` compiles it with ``equinox.filter_jit`` (with the
  CPU options of :mod:`jaxarc.agents.model.compilation`) and donates the policy, optimiser
  state and batch buffers;
* :func:`create_adaptive_train_step` uses the compiled step and, if tracing fails (an
  untraceable user policy or reward), warns once and runs the same step eagerly.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float32, PyTree

from jaxarc.agents.grpo.config import GRPOConfig, TrainConfig
from jaxarc.agents.grpo.loss import TrainingBatchJAX, grpo_loss
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.policy import AbstractPolicy

Metrics = dict[str, Float32[Array, ""]]
TrainStepFn = Callable[
    [AbstractPolicy, PyTree, TrainingBatchJAX], tuple[AbstractPolicy, PyTree, Metrics]
]

# errors raised while tracing code that needs concrete values
TRACING_ERRORS: tuple[type[BaseException], ...] = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.UnexpectedTracerError,
)


def make_optimizer(config: TrainConfig) -> optax.GradientTransformation:
    """Global-norm clipping then Adam with the configured learning-rate schedule.

    The schedule counts optimiser steps: ``epochs * minibatches`` per update.
    """
    per_update = config.grpo.epochs * config.grpo.minibatches
    total = config.num_updates * per_update
    warmup = config.warmup_updates * per_update
    if config.lr_schedule == "constant":
        schedule = optax.constant_schedule(config.lr)
    elif config.lr_schedule == "cosine":
        schedule = optax.cosine_decay_schedule(config.lr, max(total - warmup, 1), alpha=0.1)
    elif config.lr_schedule == "linear":
        schedule = optax.linear_schedule(config.lr, config.lr * 0.1, max(total - warmup, 1))
    else:
        raise ValueError(f"unknown lr_schedule {config.lr_schedule!r}")
    if warmup:
        schedule = optax.join_schedules(
            [optax.linear_schedule(0.0, config.lr, warmup), schedule], [warmup]
        )
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(schedule))


def surrogate_step(
    policy: AbstractPolicy,
    opt_state: PyTree,
    batch: TrainingBatchJAX,
    optimizer: optax.GradientTransformation,
    config: GRPOConfig,
) -> tuple[AbstractPolicy, PyTree, Metrics]:
    """One gradient step on ``batch``: ``(policy, opt_state, metrics)``."""
    grad_fn = eqx.filter_value_and_grad(lambda p: grpo_loss(p, batch, config), has_aux=True)
    (_, metrics), grads = grad_fn(policy)
    params = eqx.filter(policy, eqx.is_inexact_array)
    with jax.numpy_dtype_promotion("standard"):  # optax mixes int32 counts and floats
        updates, opt_state = optimizer.update(grads, opt_state, params)
    policy = eqx.apply_updates(policy, updates)
    metrics = dict(metrics, grad_norm=gradient_norm(grads))
    return policy, opt_state, metrics


def gradient_norm(grads: PyTree) -> Float32[Array, ""]:
    """The global L2 norm of ``grads`` (what ``optax.clip_by_global_norm`` clips), float32.

    Written out: optax 0.2.5 renamed its own (``optax.tree.norm``) and warns under the old
    name, ``optax.global_norm``, while jaxarc supports optax from 0.2.3."""
    leaves = [leaf for leaf in jax.tree.leaves(grads) if eqx.is_inexact_array(leaf)]
    return jnp.sqrt(sum(jnp.sum(jnp.square(leaf)) for leaf in leaves)).astype(jnp.float32)


def create_jax_surrogate_train_step(
    policy: AbstractPolicy, optimizer: optax.GradientTransformation, config: GRPOConfig
) -> TrainStepFn:
    """The compiled step ``(policy, opt_state, batch) -> (policy, opt_state, metrics)``.

    Buffers of all three arguments are donated: do not reuse them after the call.
    ``policy`` is only checked here (it must be an :class:`AbstractPolicy`).
    """
    if not isinstance(policy, AbstractPolicy):
        raise TypeError(f"policy must be an AbstractPolicy, got {type(policy).__name__}")

    def step(policy, opt_state, batch):
        return surrogate_step(policy, opt_state, batch, optimizer, config)

    return policy_jit(step, donate="all")


def create_adaptive_train_step(
    policy: AbstractPolicy, optimizer: optax.GradientTransformation, config: GRPOConfig
) -> TrainStepFn:
    """The compiled step, falling back once (with a warning) to eager execution when tracing
    fails; the eager step computes the same function, so results agree."""
    compiled = create_jax_surrogate_train_step(policy, optimizer, config)
    eager_mode = False

    def step(policy, opt_state, batch):
        nonlocal eager_mode
        if not eager_mode:
            try:
                return compiled(policy, opt_state, batch)
            except TRACING_ERRORS as err:
                eager_mode = True
                warnings.warn(
                    "the GRPO train step could not be traced "
                    f"({type(err).__name__}: {str(err).splitlines()[0]}); "
                    "falling back to eager execution (much slower, same results)",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return surrogate_step(policy, opt_state, batch, optimizer, config)

    return step
