"""Point actions for categorical policy heads: one flat index (``Discrete``) or one index per
part (``MultiDiscrete([K, H, W])``), over the allowed operations only."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments import spaces
from jaxtyping import Array, Bool, Int32, PRNGKeyArray

from jaxarc.envs.integers import check_integers
from jaxarc.envs.structured_actions import PointAction
from jaxarc.gymnax.spaces import StructuredActionSpace
from jaxarc.wrappers.base import AbstractEnvWrapper


def _point_action_layout(env: Any, who: str) -> tuple[tuple[int, ...], tuple[int, int]]:
    """The allowed operation ids and the canvas shape of a point-action environment."""
    inner = env.action_space(env.default_params)
    if not isinstance(inner, StructuredActionSpace):
        raise TypeError(
            f"{who} wraps a jaxarc environment's structured actions, got {type(inner).__name__}"
        )
    if inner.selection_format != "point":
        raise ValueError(
            f"{who} needs point actions, the environment uses {inner.selection_format!r}: "
            "make it with selection_format='point'"
        )
    operations = tuple(int(op) for op in inner.allowed_operations)
    height, width = (int(s) for s in inner.canvas_shape)
    return operations, (height, width)


def _flat_parts(value: Any, name: str, shape: tuple[int, ...], space: str) -> Int32[Array, "..."]:
    """``value`` as int32 of ``shape``: integers only (``TypeError``), that shape
    (``ValueError``); traced values are checked by dtype."""
    value = check_integers(value, name)
    if np.shape(value) != shape:
        raise ValueError(
            f"an action of {space} has shape {shape}, got shape {np.shape(value)} (one "
            "environment's action: vmap env.step over a batch)"
        )
    return jnp.asarray(value, dtype=jnp.int32)


def _refuse_outside(
    value: Int32[Array, "..."], outside: Bool[Array, ""], space: str, config: Any
) -> Int32[Array, "..."]:
    """``value`` unchanged, or an error when it lies ``outside`` the space: a ``ValueError``
    now for a concrete value, an ``equinox.error_if`` in compiled code when the
    environment validates. Otherwise the caller makes the action a no-op."""
    if not isinstance(outside, jax.core.Tracer):
        if bool(outside):
            raise ValueError(f"action {np.asarray(value).tolist()} is outside {space}")
        return value
    if config.environment.validate:
        value = eqx.error_if(value, outside, f"action outside {space}")
    return value


class FlatPointActionWrapper(AbstractEnvWrapper):
    """Actions are ints ``a`` in ``[0, K * H * W)``: operation ``operations[a // (H*W)]`` at
    cell ``(a % (H*W)) // W, a % W``.

    ``operations`` are the wrapped action space's allowed operations (all 35, or those left
    by a :class:`~jaxarc.wrappers.RestrictOperationsWrapper` below this one), so ``K`` is
    their count. Needs ``selection_format="point"``.
    """

    operations: tuple[int, ...] = eqx.field(static=True)
    canvas_shape: tuple[int, int] = eqx.field(static=True)

    def __init__(self, env: Any):
        self.env = env
        self.operations, self.canvas_shape = _point_action_layout(env, type(self).__name__)

    @property
    def num_actions(self) -> int:
        height, width = self.canvas_shape
        return len(self.operations) * height * width

    def to_point_action(self, index: Int32[Array, ""]) -> PointAction:
        """The structured action of a flat index (traceable), by the rule of
        docs/environment.md: one integer (a ``TypeError`` for floats, strings or bools, a
        ``ValueError`` for another shape); an index outside ``[0, num_actions)`` is a
        ``ValueError`` when given from Python, an error in compiled code when the environment
        validates (``EnvironmentConfig.validate``), and otherwise a no-op step."""
        height, width = self.canvas_shape
        space = f"Discrete({self.num_actions})"
        index = _flat_parts(index, "action", (), space)
        outside = (index < 0) | (index >= self.num_actions)
        index = _refuse_outside(index, outside, space, self.unwrapped.config)
        op_slot, cell = jnp.divmod(jnp.clip(index, 0, self.num_actions - 1), height * width)
        table = jnp.asarray(self.operations, dtype=jnp.int32)
        operation = jnp.where(outside, jnp.int32(-1), table[op_slot])
        return PointAction(operation, cell // jnp.int32(width), cell % jnp.int32(width))

    def flat_index(self, operation: int, row: int, col: int) -> int:
        """The flat index of an allowed operation at ``(row, col)`` (host-side)."""
        height, width = self.canvas_shape
        if operation not in self.operations:
            raise ValueError(f"operation {operation} is not among {self.operations}")
        if not (0 <= row < height and 0 <= col < width):
            raise ValueError(f"cell {(row, col)} is outside the {height}x{width} canvas")
        return (self.operations.index(operation) * height + row) * width + col

    def step(self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None):
        return self.env.step(key, state, self.to_point_action(action), params)

    def action_space(self, params: Any = None) -> spaces.Discrete:
        return spaces.Discrete(self.num_actions)


class MultiDiscrete(spaces.Space):
    """gymnax-style space of int vectors ``x`` with ``0 <= x[i] < nvec[i]`` (gymnax has none)."""

    def __init__(self, nvec: tuple[int, ...]):
        self.nvec = tuple(int(n) for n in nvec)
        self.shape = (len(self.nvec),)
        self.dtype = jnp.int32

    def __repr__(self) -> str:
        return f"MultiDiscrete({list(self.nvec)})"

    def sample(self, key: PRNGKeyArray) -> Int32[Array, " N"]:
        return jax.random.randint(key, self.shape, 0, jnp.asarray(self.nvec), dtype=jnp.int32)

    def contains(self, x: Array) -> Bool[Array, ""]:
        x = jnp.asarray(x)
        if x.shape != self.shape:
            return jnp.asarray(False)
        return jnp.all((x >= 0) & (x < jnp.asarray(self.nvec)))


class MultiDiscretePointActionWrapper(AbstractEnvWrapper):
    """Actions are int vectors ``(slot, row, col)`` in ``MultiDiscrete([K, H, W])``: operation
    ``operations[slot]`` at cell ``(row, col)``, for agents with one categorical head per part.

    ``operations`` are the wrapped action space's allowed operations (see
    :class:`FlatPointActionWrapper`). A part out of its range is refused from Python, an
    error when the environment validates, else makes the action a no-op step (never another
    cell). Needs ``selection_format="point"``.
    """

    operations: tuple[int, ...] = eqx.field(static=True)
    canvas_shape: tuple[int, int] = eqx.field(static=True)

    def __init__(self, env: Any):
        self.env = env
        self.operations, self.canvas_shape = _point_action_layout(env, type(self).__name__)

    @property
    def nvec(self) -> tuple[int, int, int]:
        return (len(self.operations), *self.canvas_shape)

    def to_point_action(self, action: Int32[Array, " 3"]) -> PointAction:
        """The structured action of a ``(slot, row, col)`` vector (traceable), by the rule
        of :meth:`FlatPointActionWrapper.to_point_action` (a part outside its range makes
        the action a no-op step when nothing validates it)."""
        space = f"MultiDiscrete({list(self.nvec)})"
        action = _flat_parts(action, "action", (3,), space)
        high = jnp.asarray(self.nvec, dtype=jnp.int32)
        outside = jnp.any((action < 0) | (action >= high))
        action = _refuse_outside(action, outside, space, self.unwrapped.config)
        clipped = jnp.clip(action, 0, high - 1)
        table = jnp.asarray(self.operations, dtype=jnp.int32)
        operation = jnp.where(outside, jnp.int32(-1), table[clipped[0]])
        return PointAction(operation, clipped[1], clipped[2])

    def step(self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None):
        return self.env.step(key, state, self.to_point_action(action), params)

    def action_space(self, params: Any = None) -> MultiDiscrete:
        return MultiDiscrete(self.nvec)
