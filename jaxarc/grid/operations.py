"""The 35 grid operations on one working grid, branch-free (see ``docs/operations.md``).

Under ``vmap`` a ``lax.switch`` over 35 branches evaluates every branch for every environment,
so :func:`apply_operation` instead groups the operations into families that each run once:

* paint (FILL c, FLOOD c): one masked write of a per-environment colour; the FLOOD mask comes
  from :func:`jaxarc.grid.flood_fill.flood_regions`, whose loop exits at once without seeds;
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

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.bit_rows import check_width
from jaxarc.grid.flood_fill import flood_regions
from jaxarc.grid.fusion_barrier import materialize
from jaxarc.grid.geometry import CoordinateMap, SelectionBox

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


def _in_range(op: Int32[Array, ""], first: int, last: int) -> Bool[Array, ""]:
    return (op >= first) & (op <= last)


def coordinate_map(
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
    active_rows, active_cols = _spans(state.shape, height, width)
    selected = selection & active_rows[:, None] & active_cols[None, :]

    # Per-environment plan: scalars and row/column spans, computed once (not once per cell).
    box = SelectionBox.of(selected)
    raw_box = SelectionBox.of(selection)  # RESIZE reads the whole canvas
    has_selection = box.bottom >= 0
    is_move = _in_range(op, ops.MOVE_UP, ops.MOVE_RIGHT)
    is_box_transform = _in_range(op, ops.ROTATE_CW, ops.FLIP_TB)
    is_paste = op == ops.PASTE
    resizing = (op == ops.RESIZE) & (raw_box.bottom >= 0)
    # Shapes: COPY_INPUT takes the input's; RESIZE the bottom-right selected cell on the canvas.
    base_shape = jnp.where(op == ops.COPY_INPUT, input_shape.astype(jnp.int32), state.shape)
    new_shape = jnp.where(resizing, jnp.stack([raw_box.bottom + 1, raw_box.right + 1]), base_shape)
    coordinate_map_ = coordinate_map(op, box, height, width)
    plan = materialize(
        {
            "fill": _in_range(op, ops.FILL_0, ops.FILL_0 + 9),
            "flood": _in_range(op, ops.FLOOD_0, ops.FLOOD_0 + 9),
            "colour": (op % 10).astype(jnp.int8),
            "paste": is_paste,
            "copy_input": op == ops.COPY_INPUT,
            "places": (is_move | is_box_transform | is_paste) & has_selection,
            "needs_mark": is_move | is_paste,
            "copies": ((op == ops.COPY) | (op == ops.CUT)) & has_selection,
            "moves": is_move,
            "edits": _in_range(op, 0, ops.RESIZE),
            "clears": op == ops.CLEAR,
            "zeroes_selected": (op == ops.CUT) | is_move,
            "new_shape": new_shape,
            "map": coordinate_map_,
            "mapped": coordinate_map_.mapped_spans(height, width),
            "base": _spans(base_shape, height, width),
            "new": _spans(new_shape, height, width),
            "box": _box_spans(box, height, width, is_box_transform),
        }
    )
    mapped = _cells(plan["mapped"])
    base_active = _cells(plan["base"])
    new_active = _cells(plan["new"])
    in_old_box = _cells(plan["box"])

    # Paint family: FILL c writes the selection, FLOOD c the regions of the selected cells.
    flooded = flood_regions(grid, selected & plan["flood"])
    painted = (selected & plan["fill"]) | flooded

    # Coordinate-map family: one shifted window of (colour + _MARK * marked) from grid/clipboard.
    source_marked = jnp.where(plan["paste"], state.clipboard_mask, selected)
    source_values = jnp.where(plan["paste"], state.clipboard, grid)
    packed = jnp.maximum(source_values, jnp.int8(0)) + jnp.where(
        source_marked, jnp.int8(_MARK), jnp.int8(0)
    )
    oriented, shifted = plan["map"].gather(packed)
    # Marks matter only for translations (MOVE, PASTE, COPY, CUT), where both reads agree.
    shifted_value = shifted & jnp.int8(_MARK - 1)
    shifted_mark = shifted >= jnp.int8(_MARK)
    can_place = mapped & (shifted_mark | ~plan["needs_mark"]) & plan["places"]
    can_place = can_place & active_rows[:, None] & active_cols[None, :]

    zeroed = plan["clears"] | (selected & plan["zeroes_selected"]) | in_old_box
    base_grid = jnp.where(plan["copy_input"], input_grid, grid)
    content = jnp.where(
        painted,
        plan["colour"],
        jnp.where(
            can_place,
            oriented & jnp.int8(_MARK - 1),
            jnp.where(zeroed | ~base_active, jnp.int8(0), base_grid),
        ),
    )
    new_grid = jnp.where(new_active, content, jnp.int8(-1))

    new_clipboard = jnp.where(
        plan["copies"], jnp.where(mapped, shifted_value, jnp.int8(-1)), state.clipboard
    )
    new_clipboard_mask = jnp.where(plan["copies"], mapped & shifted_mark, state.clipboard_mask)
    new_selection = jnp.where(plan["moves"], can_place, selected & new_active)

    return GridState(
        grid=new_grid,
        shape=plan["new_shape"],
        selection=jnp.where(plan["edits"], new_selection, state.selection),
        clipboard=new_clipboard,
        clipboard_mask=new_clipboard_mask,
    )


def _spans(shape: Int32[Array, "2"], height: int, width: int):
    """Rows and columns of the area ``shape`` (top-left anchored) on the canvas."""
    rows = jnp.arange(height, dtype=jnp.int32) < shape[0]
    cols = jnp.arange(width, dtype=jnp.int32) < shape[1]
    return rows, cols


def _box_spans(box: SelectionBox, height: int, width: int, enabled: Bool[Array, ""]):
    """Rows and columns of ``box`` (both empty when not ``enabled``)."""
    rows = jnp.arange(height, dtype=jnp.int32)
    cols = jnp.arange(width, dtype=jnp.int32)
    in_rows = (rows >= box.top) & (rows <= box.bottom) & enabled
    in_cols = (cols >= box.left) & (cols <= box.right)
    return in_rows, in_cols


def _cells(spans) -> Bool[Array, "H W"]:
    rows, cols = spans
    return rows[:, None] & cols[None, :]
