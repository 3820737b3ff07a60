"""Jumanji specs of ARC observations and actions, and the action vector of each format.

Jumanji's wrappers pass actions as arrays (``JumanjiToGymWrapper`` calls ``jnp.asarray`` on
them), so the Jumanji face takes one int32 vector per action, a ``MultiDiscreteArray``:

========  ================================  ===================================
format    vector                            ``num_values``
========  ================================  ===================================
point     ``(op, row, col)``                ``(35, H, W)``
bbox      ``(op, r1, c1, r2, c2)``          ``(35, H, W, H, W)``
mask      ``(op, m_0, ..., m_{H*W-1})``     ``(35, 2, ..., 2)`` (row-major cells)
========  ================================  ===================================

Operations the config does not allow are no-ops that count as a step, as in every face.
The observation spec is a nested ``Spec`` whose constructor is
:class:`~jaxarc.envs.types.ArcObservation`, with the bounds of the gymnax observation space.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int32
from jumanji import specs

from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.integers import check_integers
from jaxarc.envs.structured_actions import AbstractAction, BboxAction, MaskAction, PointAction
from jaxarc.envs.types import ArcObservation
from jaxarc.grid.operation_ids import NUM_OPERATIONS


def action_num_values(config: JaxArcConfig) -> tuple[int, ...]:
    """The number of values of each entry of the action vector (see the module table)."""
    height, width = config.dataset.canvas_shape
    fmt = config.action.selection_format
    if fmt == "point":
        return (NUM_OPERATIONS, height, width)
    if fmt == "bbox":
        return (NUM_OPERATIONS, height, width, height, width)
    if fmt == "mask":
        return (NUM_OPERATIONS, *([2] * (height * width)))
    raise ValueError(f"unknown selection_format {fmt!r}")


def action_spec(config: JaxArcConfig) -> specs.MultiDiscreteArray:
    """The ``MultiDiscreteArray`` spec of the config's action vectors."""
    num_values = np.asarray(action_num_values(config), dtype=np.int32)
    return specs.MultiDiscreteArray(num_values=num_values, dtype=jnp.int32, name="action")


def action_from_vector(vector: Int32[Array, " n"], config: JaxArcConfig) -> AbstractAction:
    """The structured action of one action vector (traceable).

    The vector must have the spec's shape (a ``ValueError`` otherwise: a shorter vector is
    not padded, a longer one not cut) and hold integers (a ``TypeError`` for floats,
    strings or bools; traced values by dtype), by the rule of docs/environment.md. Mask
    entries select where they hold 1 (with validation, values other than 0/1 are errors).
    """
    fmt = config.action.selection_format
    vector = check_integers(vector, "action")
    expected = (len(action_num_values(config)),)
    if np.shape(vector) != expected:
        raise ValueError(
            f"a {fmt} action is an int vector of shape {expected} (env.action_spec.shape), "
            f"got shape {np.shape(vector)}"
        )
    vector = jnp.asarray(vector, dtype=jnp.int32)
    if fmt == "point":
        return PointAction(vector[0], vector[1], vector[2])
    if fmt == "bbox":
        return BboxAction(vector[0], vector[1], vector[2], vector[3], vector[4])
    cells = vector[1:].reshape(config.dataset.canvas_shape)
    if not isinstance(cells, jax.core.Tracer):  # (a concrete vector's mask is checked now)
        cells = np.asarray(cells)
    return MaskAction(vector[0], cells)


def action_to_vector(action: AbstractAction) -> Int32[Array, " n"]:
    """The action vector of one structured action (the inverse of :func:`action_from_vector`)."""
    if isinstance(action, PointAction):
        parts = [action.operation, action.row, action.col]
    elif isinstance(action, BboxAction):
        parts = [action.operation, action.r1, action.c1, action.r2, action.c2]
    elif isinstance(action, MaskAction):
        cells = action.selection.reshape(-1).astype(jnp.int32)
        return jnp.concatenate([jnp.asarray(action.operation, jnp.int32)[None], cells])
    else:
        raise TypeError(f"not a structured action: {type(action).__name__}")
    return jnp.stack([jnp.asarray(p, jnp.int32) for p in parts])


def _box(shape, dtype, low, high, name: str) -> specs.BoundedArray:
    # bounds of the full shape: Jumanji compares values with them, and under JAX's strict
    # rank promotion a (P, 2) value cannot meet a (2,) bound
    low, high = (np.broadcast_to(np.asarray(b, dtype=dtype), shape) for b in (low, high))
    return specs.BoundedArray(shape=shape, dtype=dtype, minimum=low, maximum=high, name=name)


def observation_spec(config: JaxArcConfig, max_demos: int) -> specs.Spec[ArcObservation]:
    """The nested spec of :class:`~jaxarc.envs.types.ArcObservation`."""
    height, width = config.dataset.canvas_shape
    canvas, demos = (height, width), (max_demos, height, width)
    shape_max = np.asarray([height, width], dtype=np.int32)
    return specs.Spec(
        ArcObservation,
        "ArcObservation",
        grid=_box(canvas, jnp.int8, -1, 9, "grid"),
        grid_shape=_box((2,), jnp.int32, 0, shape_max, "grid_shape"),
        input_grid=_box(canvas, jnp.int8, -1, 9, "input_grid"),
        input_shape=_box((2,), jnp.int32, 0, shape_max, "input_shape"),
        demo_inputs=_box(demos, jnp.int8, -1, 9, "demo_inputs"),
        demo_outputs=_box(demos, jnp.int8, -1, 9, "demo_outputs"),
        demo_input_shapes=_box((max_demos, 2), jnp.int32, 0, shape_max, "demo_input_shapes"),
        demo_output_shapes=_box((max_demos, 2), jnp.int32, 0, shape_max, "demo_output_shapes"),
        demo_mask=_box((max_demos,), jnp.bool_, False, True, "demo_mask"),
        clipboard=_box(canvas, jnp.int8, -1, 9, "clipboard"),
        clipboard_mask=_box(canvas, jnp.bool_, False, True, "clipboard_mask"),
        allowed_operations=_box((NUM_OPERATIONS,), jnp.bool_, False, True, "allowed_operations"),
        step_count=_box((), jnp.int32, 0, config.environment.max_episode_steps, "step_count"),
    )
