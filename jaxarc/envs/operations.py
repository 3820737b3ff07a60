"""The 35 grid operations on one working grid, branch-free (see ``docs/operations.md``).

Under ``vmap`` a ``lax.switch`` over 35 branches evaluates every branch for every environment,
so :func:`apply_operation` instead groups the operations into families that each run once:

* paint (FILL c, FLOOD c): one masked write of a per-environment colour; the FLOOD mask comes
  from :func:`jaxarc.envs.flood_fill.flood_regions`, whose loop exits at once without seeds;
* coordinate maps (MOVE, ROTATE, FLIP, PASTE, COPY, CUT): per-environment scalars choose an
  affine source-coordinate map, then ONE gather reads value and "selected" bit together;
* whole-grid ops (CLEAR, COPY_INPUT, RESIZE): per-environment shapes and a final ``where``.

The selection is the action's raw selection on the whole canvas; every operation but RESIZE
uses ``selection & active_area``. Operations that need a selection are no-ops when it is empty;
SUBMIT and ids outside 0..33 leave the state unchanged.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, ArrayLike, Bool, Int8, Int32

from jaxarc.envs import operation_ids as ops
from jaxarc.envs.bit_rows import check_width
from jaxarc.envs.flood_fill import flood_regions
from jaxarc.envs.grid_geometry import CoordinateMap, SelectionBox

# The gathered source cell packs its colour (0..9) with this flag for "selected".
_MARK = 16


class GridState(eqx.Module):
    """The editable part of an episode's state, for one environment (no batch axis)."""

    grid: Int8[Array, "H W"]  # colours 0..9 inside the active area, -1 outside
    shape: Int32[Array, "2"]  # active area (rows, cols), anchored at the top-left corner
    selection: Bool[Array, "H W"]  # cells selected by the last action (moved by MOVE)
    clipboard: Int8[Array, "H W"]  # copied content anchored at (0, 0); -1 where nothing
    clipboard_mask: Bool[Array, "H W"]  # copied cells that were selected; all False = empty

    @classmethod
    def create(cls, grid: ArrayLike, shape: ArrayLike | None = None) -> GridState:
        """A state holding ``grid`` (cells outside ``shape`` set to -1) and an empty clipboard.

        ``shape`` defaults to the extent of the non-negative cells of ``grid``.
        """
        grid = jnp.asarray(grid, jnp.int8)
        if grid.ndim != 2:
            raise ValueError(f"GridState.create: grid must be 2-D (H, W), got shape {grid.shape}")
        if shape is None:
            inside = grid >= 0
            shape = jnp.stack([jnp.sum(jnp.any(inside, 1)), jnp.sum(jnp.any(inside, 0))])
        shape = jnp.asarray(shape, jnp.int32)
        rows = lax.broadcasted_iota(jnp.int32, grid.shape, 0)
        cols = lax.broadcasted_iota(jnp.int32, grid.shape, 1)
        active = (rows < shape[0]) & (cols < shape[1])
        return cls(
            grid=jnp.where(active, grid, jnp.int8(-1)),
            shape=shape,
            selection=jnp.zeros(grid.shape, bool),
            clipboard=jnp.full(grid.shape, -1, jnp.int8),
            clipboard_mask=jnp.zeros(grid.shape, bool),
        )


def _area(shape: Int32[Array, "2"], height: int, width: int) -> Bool[Array, "H W"]:
    """The active area of ``shape`` on an ``height x width`` canvas."""
    in_rows = jnp.arange(height, dtype=jnp.int32) < shape[0]
    in_cols = jnp.arange(width, dtype=jnp.int32) < shape[1]
    return in_rows[:, None] & in_cols[None, :]


def _in_range(op: Int32[Array, ""], first: int, last: int) -> Bool[Array, ""]:
    return (op >= first) & (op <= last)


def _coordinate_map(
    op: Int32[Array, ""], box: SelectionBox, height: int, width: int
) -> CoordinateMap:
    """The source-coordinate map of MOVE/ROTATE/FLIP/COPY/CUT/PASTE (an empty one otherwise)."""
    top, bottom, left, right = box.top, box.bottom, box.left, box.right
    box_h, box_w = box.height, box.width
    canvas = (0, height, 0, width)
    in_box = (top, bottom + 1, left, right + 1)
    rotated_box = (top, top + box_w, left, left + box_h)
    choices = [
        (0, 1, 0, 0, 0, 1, 0, 0, 0, 0),  # not a mapped operation: empty rectangle
        (1, 1, 0, 0, 0, 1, *canvas),  # MOVE_UP: (r, c) <- (r + 1, c)
        (-1, 1, 0, 0, 0, 1, *canvas),  # MOVE_DOWN: (r, c) <- (r - 1, c)
        (0, 1, 0, 1, 0, 1, *canvas),  # MOVE_LEFT: (r, c) <- (r, c + 1)
        (0, 1, 0, -1, 0, 1, *canvas),  # MOVE_RIGHT: (r, c) <- (r, c - 1)
        # ROTATE_CW: local (i, j) <- (box_h - 1 - j, i)
        (top + box_h - 1 + left, 0, -1, left - top, 1, 0, *rotated_box),
        # ROTATE_CCW: local (i, j) <- (j, box_w - 1 - i)
        (top - left, 0, 1, left + box_w - 1 + top, -1, 0, *rotated_box),
        (0, 1, 0, 2 * left + box_w - 1, 0, -1, *in_box),  # FLIP_LR
        (2 * top + box_h - 1, -1, 0, 0, 0, 1, *in_box),  # FLIP_TB
        (top, 1, 0, left, 0, 1, 0, box_h, 0, box_w),  # COPY / CUT: box -> clipboard at (0, 0)
        (-top, 1, 0, -left, 0, 1, *canvas),  # PASTE: clipboard (0, 0) -> selection's top-left
    ]
    family = jnp.where(
        _in_range(op, ops.MOVE_UP, ops.COPY),
        op - (ops.MOVE_UP - 1),
        jnp.where(op == ops.PASTE, 10, jnp.where(op == ops.CUT, 9, 0)),
    )
    return CoordinateMap.select(family, choices)


def apply_operation(
    state: GridState,
    operation: Int32[Array, ""],
    selection: Bool[Array, "H W"],
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
) -> GridState:
    """Apply one of the 35 operations to one environment's :class:`GridState`.

    ``selection`` is the action's selection on the whole canvas; ``input_grid``/``input_shape``
    are the episode's input (for COPY_INPUT). Branch-free: the cost is the same for every
    operation, which is what ``vmap`` pays anyway.
    """
    height, width = state.grid.shape
    check_width(width)
    if selection.shape != (height, width) or input_grid.shape != (height, width):
        raise ValueError(
            f"apply_operation: selection {selection.shape} and input_grid {input_grid.shape} "
            f"must match the canvas {(height, width)} (no batch axis: vmap over environments)"
        )
    op = jnp.asarray(operation, jnp.int32)
    grid = state.grid
    active = _area(state.shape, height, width)
    selected = selection & active
    box = SelectionBox.of(selected)
    has_selection = box.bottom >= 0

    is_fill = _in_range(op, ops.FILL_0, ops.FILL_0 + 9)
    is_flood = _in_range(op, ops.FLOOD_0, ops.FLOOD_0 + 9)
    is_move = _in_range(op, ops.MOVE_UP, ops.MOVE_RIGHT)
    is_box_transform = _in_range(op, ops.ROTATE_CW, ops.FLIP_TB)
    is_paste = op == ops.PASTE
    is_copying = ((op == ops.COPY) | (op == ops.CUT)) & has_selection
    is_edit = _in_range(op, 0, ops.RESIZE)

    # Shapes: COPY_INPUT takes the input's; RESIZE the bottom-right selected cell on the canvas.
    raw_box = SelectionBox.of(selection)
    resizing = (op == ops.RESIZE) & (raw_box.bottom >= 0)
    base_shape = jnp.where(op == ops.COPY_INPUT, input_shape.astype(jnp.int32), state.shape)
    new_shape = jnp.where(resizing, jnp.stack([raw_box.bottom + 1, raw_box.right + 1]), base_shape)
    base_grid = jnp.where(op == ops.COPY_INPUT, input_grid, grid)
    base_active = _area(base_shape, height, width)
    new_active = _area(new_shape, height, width)

    # Paint family: FILL c writes the selection, FLOOD c the regions of the selected cells.
    colour = (op % 10).astype(jnp.int8)
    flooded = flood_regions(grid, selected & is_flood)
    painted = (selected & is_fill) | flooded

    # Coordinate-map family: one gather of (colour + _MARK * selected) from grid or clipboard.
    source_marked = jnp.where(is_paste, state.clipboard_mask, selected)
    source_values = jnp.where(is_paste, state.clipboard, grid)
    packed = jnp.maximum(source_values, jnp.int8(0)) + jnp.where(
        source_marked, jnp.int8(_MARK), jnp.int8(0)
    )
    coordinate_map = _coordinate_map(op, box, height, width)
    gathered, mapped = coordinate_map.gather(packed)
    gathered_value = gathered & jnp.int8(_MARK - 1)
    gathered_mark = gathered >= jnp.int8(_MARK)
    needs_mark = is_move | is_paste
    placed = (
        mapped
        & (gathered_mark | ~needs_mark)
        & active
        & (is_move | is_box_transform | is_paste)
        & has_selection
    )

    zeroed = (
        (op == ops.CLEAR)
        | (selected & ((op == ops.CUT) | is_move))
        | (is_box_transform & box.mask(height, width))
    )
    content = jnp.where(
        painted,
        colour,
        jnp.where(
            placed,
            gathered_value,
            jnp.where(zeroed | ~base_active, jnp.int8(0), base_grid),
        ),
    )
    new_grid = jnp.where(new_active, content, jnp.int8(-1))

    new_clipboard = jnp.where(
        is_copying, jnp.where(mapped, gathered_value, jnp.int8(-1)), state.clipboard
    )
    new_clipboard_mask = jnp.where(is_copying, mapped & gathered_mark, state.clipboard_mask)
    new_selection = jnp.where(is_move, placed, selected & new_active)

    return GridState(
        grid=new_grid,
        shape=new_shape,
        selection=jnp.where(is_edit, new_selection, state.selection),
        clipboard=new_clipboard,
        clipboard_mask=new_clipboard_mask,
    )
