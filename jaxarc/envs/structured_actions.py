"""Structured actions: an operation id plus a selection of canvas cells.

Every action is an equinox module of int32 scalars (a batch is the same module with a
leading axis on every field), so actions pass through ``jit``, ``vmap`` and ``lax.scan``.
``to_selection_mask`` turns one action into a boolean mask over the canvas; coordinates
outside the canvas select nothing there (they are rejected only in validation mode).
The step first ``normalized``-s every action (unknown operation ids become the no-op -1,
coordinates are clipped to ``-1..size``, selecting the same cells), so the step and the
history see the same action and a replay never shows an action that was not taken.

Each format also defines its row in the episode's action history, in the cheapest form:
point ``(op, row, col)`` and bbox ``(op, r1, c1, r2, c2)`` as int8, mask as the operation
plus the mask bit-packed into uint8 bytes.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, Int32, UInt8

from jaxarc.envs.integers import check_integers, check_mask
from jaxarc.grid.operation_ids import NUM_OPERATIONS


def _int32(name: str):
    """An int32 field; Python/NumPy values that are not int32-range integers are refused."""
    return eqx.field(converter=lambda x: jnp.asarray(check_integers(x, name), dtype=jnp.int32))


def known_operation(operation: Int32[Array, "*batch"]) -> Int32[Array, "*batch"]:
    """``operation`` if it is an operation id (``0..NUM_OPERATIONS - 1``), else -1 (no-op)."""
    operation = jnp.asarray(operation, jnp.int32)
    return jnp.where((operation >= 0) & (operation < NUM_OPERATIONS), operation, jnp.int32(-1))


def _on_canvas_or_just_off(coordinate: Int32[Array, "*batch"], size: int) -> Int32[Array, "*batch"]:
    """``coordinate`` clipped to ``-1..size``: the same cells are selected (-1 and ``size``
    select nothing, like any coordinate beyond them) and the value fits an int8 history."""
    return jnp.clip(coordinate, -1, size)


def _canvas_coordinates(
    grid_shape: tuple[int, int],
) -> tuple[Int32[Array, "H 1"], Int32[Array, "1 W"]]:
    height, width = grid_shape
    rows = jnp.arange(height, dtype=jnp.int32)[:, None]
    cols = jnp.arange(width, dtype=jnp.int32)[None, :]
    return rows, cols


class AbstractAction(eqx.Module):
    """An operation applied to a selection of cells."""

    operation: eqx.AbstractVar[Int32[Array, "*batch"]]

    @abc.abstractmethod
    def to_selection_mask(self, grid_shape: tuple[int, int]) -> Bool[Array, "H W"]:
        """The selected cells on an ``(H, W)`` canvas (one action, no batch axis)."""

    @abc.abstractmethod
    def in_bounds(self, grid_shape: tuple[int, int]) -> Bool[Array, ""]:
        """Whether every coordinate lies on the canvas."""

    @abc.abstractmethod
    def normalized(self, grid_shape: tuple[int, int]) -> AbstractAction:
        """The same action in canonical range: an unknown operation id becomes -1 (the no-op
        it is) and coordinates are clipped to ``-1..size``, which selects the same cells.
        The step applies and records this form, so the history holds what was taken."""

    @abc.abstractmethod
    def to_history(self) -> Array:
        """This action's row in the episode history (see module docstring)."""

    @classmethod
    @abc.abstractmethod
    def history_row_shape(cls, grid_shape: tuple[int, int]) -> tuple[tuple[int, ...], np.dtype]:
        """Shape and dtype of one history row."""

    @classmethod
    @abc.abstractmethod
    def from_history(cls, row: Array, grid_shape: tuple[int, int]) -> AbstractAction:
        """Inverse of :meth:`to_history`."""


class PointAction(AbstractAction):
    """Select the single cell ``(row, col)``."""

    operation: Int32[Array, "*batch"] = _int32("operation")
    row: Int32[Array, "*batch"] = _int32("row")
    col: Int32[Array, "*batch"] = _int32("col")

    def to_selection_mask(self, grid_shape: tuple[int, int]) -> Bool[Array, "H W"]:
        rows, cols = _canvas_coordinates(grid_shape)
        return (rows == self.row) & (cols == self.col)

    def in_bounds(self, grid_shape: tuple[int, int]) -> Bool[Array, ""]:
        height, width = grid_shape
        return (self.row >= 0) & (self.row < height) & (self.col >= 0) & (self.col < width)

    def normalized(self, grid_shape: tuple[int, int]) -> PointAction:
        height, width = grid_shape
        return PointAction(
            known_operation(self.operation),
            _on_canvas_or_just_off(self.row, height),
            _on_canvas_or_just_off(self.col, width),
        )

    def to_history(self) -> Array:
        return jnp.stack([self.operation, self.row, self.col]).astype(jnp.int8)

    @classmethod
    def history_row_shape(cls, grid_shape):
        return (3,), np.dtype(np.int8)

    @classmethod
    def from_history(cls, row, grid_shape):
        row = jnp.asarray(row, jnp.int32)
        return cls(row[..., 0], row[..., 1], row[..., 2])


class BboxAction(AbstractAction):
    """Select the rectangle with corners ``(r1, c1)`` and ``(r2, c2)``: any order, inclusive."""

    operation: Int32[Array, "*batch"] = _int32("operation")
    r1: Int32[Array, "*batch"] = _int32("r1")
    c1: Int32[Array, "*batch"] = _int32("c1")
    r2: Int32[Array, "*batch"] = _int32("r2")
    c2: Int32[Array, "*batch"] = _int32("c2")

    def to_selection_mask(self, grid_shape: tuple[int, int]) -> Bool[Array, "H W"]:
        rows, cols = _canvas_coordinates(grid_shape)
        top, bottom = jnp.minimum(self.r1, self.r2), jnp.maximum(self.r1, self.r2)
        left, right = jnp.minimum(self.c1, self.c2), jnp.maximum(self.c1, self.c2)
        return (rows >= top) & (rows <= bottom) & (cols >= left) & (cols <= right)

    def in_bounds(self, grid_shape: tuple[int, int]) -> Bool[Array, ""]:
        height, width = grid_shape
        rows_ok = (jnp.minimum(self.r1, self.r2) >= 0) & (jnp.maximum(self.r1, self.r2) < height)
        cols_ok = (jnp.minimum(self.c1, self.c2) >= 0) & (jnp.maximum(self.c1, self.c2) < width)
        return rows_ok & cols_ok

    def normalized(self, grid_shape: tuple[int, int]) -> BboxAction:
        height, width = grid_shape
        return BboxAction(
            known_operation(self.operation),
            _on_canvas_or_just_off(self.r1, height),
            _on_canvas_or_just_off(self.c1, width),
            _on_canvas_or_just_off(self.r2, height),
            _on_canvas_or_just_off(self.c2, width),
        )

    def to_history(self) -> Array:
        return jnp.stack([self.operation, self.r1, self.c1, self.r2, self.c2]).astype(jnp.int8)

    @classmethod
    def history_row_shape(cls, grid_shape):
        return (5,), np.dtype(np.int8)

    @classmethod
    def from_history(cls, row, grid_shape):
        row = jnp.asarray(row, jnp.int32)
        return cls(row[..., 0], row[..., 1], row[..., 2], row[..., 3], row[..., 4])


class MaskAction(AbstractAction):
    """Select an arbitrary set of cells: ``selection`` is an ``(H, W)`` canvas mask.

    The mask holds booleans or the integers 0 and 1: concrete values are checked when the
    action is made (any other value is an error) and stored as booleans; a traced integer
    mask keeps its values, and a cell is selected when it holds 1 (with validation any
    other value than 0 or 1 is an error; docs/environment.md, "Integers and masks").
    """

    operation: Int32[Array, "*batch"] = _int32("operation")
    selection: Bool[Array, "*batch H W"] | Int[Array, "*batch H W"] = eqx.field(
        converter=lambda x: check_mask(x, "MaskAction.selection")
    )

    def selected(self) -> Bool[Array, "*batch H W"]:
        """The selected cells as booleans (an integer mask selects where it holds 1)."""
        if self.selection.dtype == jnp.bool_:
            return self.selection
        return self.selection == 1

    def to_selection_mask(self, grid_shape: tuple[int, int]) -> Bool[Array, "H W"]:
        if tuple(self.selection.shape[-2:]) != tuple(grid_shape):
            raise ValueError(
                f"MaskAction.selection has shape {self.selection.shape[-2:]}, "
                f"but the canvas is {tuple(grid_shape)}"
            )
        return self.selected()

    def in_bounds(self, grid_shape: tuple[int, int]) -> Bool[Array, ""]:
        return jnp.asarray(tuple(self.selection.shape[-2:]) == tuple(grid_shape))

    def values_ok(self) -> Bool[Array, ""]:
        """Whether every cell holds 0 or 1 (always true of a boolean mask)."""
        if self.selection.dtype == jnp.bool_:
            return jnp.asarray(True)
        return jnp.all((self.selection == 0) | (self.selection == 1))

    def normalized(self, grid_shape: tuple[int, int]) -> MaskAction:
        return MaskAction(known_operation(self.operation), self.selected())

    def to_history(self) -> UInt8[Array, " n"]:
        packed = jnp.packbits(self.selected().reshape(-1))
        return jnp.concatenate([self.operation.astype(jnp.uint8)[None], packed])

    @classmethod
    def history_row_shape(cls, grid_shape):
        cells = grid_shape[0] * grid_shape[1]
        return (1 + (cells + 7) // 8,), np.dtype(np.uint8)

    @classmethod
    def from_history(cls, row, grid_shape):
        cells = grid_shape[0] * grid_shape[1]
        bits = jnp.unpackbits(row[..., 1:], axis=-1, count=cells).astype(jnp.bool_)
        selection = bits.reshape(*row.shape[:-1], *grid_shape)
        # the no-op -1 is stored as the byte 255
        return cls(known_operation(row[..., 0].astype(jnp.int32)), selection)


ACTION_CLASSES: dict[str, type[AbstractAction]] = {
    "point": PointAction,
    "bbox": BboxAction,
    "mask": MaskAction,
}


def action_class(selection_format: str) -> type[AbstractAction]:
    """The action class of a selection format (``"point"``, ``"bbox"`` or ``"mask"``)."""
    try:
        return ACTION_CLASSES[selection_format]
    except KeyError:
        raise ValueError(
            f"unknown selection_format {selection_format!r}; use one of {tuple(ACTION_CLASSES)}"
        ) from None
