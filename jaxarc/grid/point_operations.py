"""The 35 grid operations specialised to point actions (one selected cell or none).

With a point action every selection is a single cell ``p`` (or empty), so

* FILL, MOVE, ROTATE, FLIP, COPY, CUT and PASTE touch at most two cells: ``p`` and, for MOVE,
  its neighbour ``q``; a 1x1 ROTATE/FLIP rewrites ``p`` with its own colour;
* the clipboard holds at most one cell, at ``(0, 0)`` (every state a point episode reaches
  from reset: COPY/CUT of one cell is the only thing that writes it);
* only FLOOD, CLEAR, COPY_INPUT and RESIZE touch the whole grid.

:func:`apply_point_operation` therefore computes a handful of per-environment scalars, the
flood region of ``p`` as packed row words (:func:`jaxarc.grid.flood_fill.flood_point_region`)
and then ONE elementwise pass over the canvas; the clipboard is updated in its corner cell.
It gives exactly the :class:`~jaxarc.grid.operations.GridState` that
:func:`~jaxarc.grid.operations.apply_operation` gives for the point's selection mask (the
tests compare both on random point episodes). ``functional`` picks it statically, from
``config.action.selection_format``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, Int32

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.bit_rows import check_width, unpack_columns_flat
from jaxarc.grid.flood_fill import flood_point_region
from jaxarc.grid.fusion_barrier import materialize, materialize_fused
from jaxarc.grid.operations import GridState

# MOVE_UP, MOVE_DOWN, MOVE_LEFT, MOVE_RIGHT: where the moved colour lands, relative to p.
_MOVE_ROW_STEP = (-1, 1, 0, 0)
_MOVE_COL_STEP = (0, 0, -1, 1)


def _in_range(op: Int32[Array, ""], first: int, last: int) -> Bool[Array, ""]:
    return (op >= first) & (op <= last)


def _inside(
    row: Int32[Array, ""], col: Int32[Array, ""], shape: Int32[Array, "2"]
) -> Bool[Array, ""]:
    """Whether ``(row, col)`` lies in the top-left-anchored area ``shape``."""
    return (row >= 0) & (col >= 0) & (row < shape[0]) & (col < shape[1])


def apply_point_operation(
    state: GridState,
    operation: Int32[Array, ""],
    row: Int32[Array, ""],
    col: Int32[Array, ""],
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
) -> GridState:
    """:func:`~jaxarc.grid.operations.apply_operation` for the point selection ``(row, col)``.

    One environment (``vmap`` over a batch). ``(row, col)`` anywhere (off the canvas selects
    nothing). Branch-free, like the generic version, but the only whole-canvas work is one
    elementwise pass and the flood fill of one seed.
    """
    height, width = state.grid.shape
    check_width(width)
    if input_grid.shape != (height, width):
        raise ValueError(
            f"apply_point_operation: input_grid {input_grid.shape} must match the canvas "
            f"{(height, width)} (no batch axis: vmap over environments)"
        )
    op = jnp.asarray(operation, jnp.int32)
    row = jnp.asarray(row, jnp.int32)
    col = jnp.asarray(col, jnp.int32)
    grid, shape = state.grid, state.shape
    canvas_shape = jnp.array([height, width], jnp.int32)
    on_canvas = _inside(row, col, canvas_shape)
    selected = on_canvas & _inside(row, col, shape)
    value = grid[jnp.clip(row, 0, height - 1), jnp.clip(col, 0, width - 1)]
    placed = jnp.maximum(value, jnp.int8(0)) & jnp.int8(15)  # a cell rewritten with its colour

    colour = (op % 10).astype(jnp.int8)
    fills = _in_range(op, ops.FILL_0, ops.FILL_0 + 9)
    floods = _in_range(op, ops.FLOOD_0, ops.FLOOD_0 + 9) & selected
    moves = _in_range(op, ops.MOVE_UP, ops.MOVE_RIGHT)
    move = jnp.clip(op - ops.MOVE_UP, 0, 3)
    target_row = row + jnp.asarray(_MOVE_ROW_STEP, jnp.int32)[move]
    target_col = col + jnp.asarray(_MOVE_COL_STEP, jnp.int32)[move]
    lands = moves & selected & _inside(target_row, target_col, shape)
    box_transform = _in_range(op, ops.ROTATE_CW, ops.FLIP_TB)
    copies = ((op == ops.COPY) | (op == ops.CUT)) & selected
    clip_value = state.clipboard[0, 0]
    pastes = (op == ops.PASTE) & state.clipboard_mask[0, 0]

    # The point p: FILL paints it, MOVE and CUT empty it, a 1x1 ROTATE/FLIP and PASTE rewrite it.
    writes_point = selected & (fills | moves | (op == ops.CUT) | box_transform | pastes)
    point_value = jnp.where(
        fills,
        colour,
        jnp.where(
            box_transform,
            placed,
            jnp.where(pastes, jnp.maximum(clip_value, jnp.int8(0)) & jnp.int8(15), jnp.int8(0)),
        ),
    )

    # Shapes: COPY_INPUT takes the input's, RESIZE ends at the point (anywhere on the canvas).
    copy_input = op == ops.COPY_INPUT
    base_shape = jnp.where(copy_input, input_shape.astype(jnp.int32), shape)
    resizing = (op == ops.RESIZE) & on_canvas
    new_shape = jnp.where(resizing, jnp.stack([row + 1, col + 1]), base_shape)
    # The selection follows a MOVE to its target; otherwise it is p while p stays in the area.
    keeps_point = selected & _inside(row, col, new_shape) & ~moves

    region = flood_point_region(grid, row, col, floods)  # [W] column words, 0 unless flooding
    # Per-environment scalars, computed once (not re-derived inside every cell's loop). Cells
    # are flat indices r * W + c; -1 marks "no such cell".
    edits = _in_range(op, 0, ops.RESIZE)
    side = max(height, width)  # area limits clipped to the canvas fit in int8

    def flat(cell_row, cell_col, enabled):
        return jnp.where(enabled, cell_row * width + cell_col, -1)

    plan = materialize(
        {
            "point": flat(row, col, writes_point),
            "point_value": point_value,
            "target": flat(target_row, target_col, lands),
            "placed": placed,
            "colour": colour,
            "copy_input": copy_input,
            "zeroes_all": op == ops.CLEAR,
            "base_shape": jnp.clip(base_shape, 0, side),
            "new_shape": new_shape,
            "new_area": jnp.clip(new_shape, 0, side),
            "keeps_selection": ~edits,
            "selection": jnp.where(
                lands, flat(target_row, target_col, True), flat(row, col, keeps_point & edits)
            ),
            "copies": copies,
            "clip_value": jnp.where(copies, placed, clip_value),
        }
    )

    # The canvas as one flat axis of H*W cells: a long contiguous loop that vectorises (a loop
    # over 30 columns at a time does not). Row and column of every cell are int8 constants.
    cells = height * width
    rows = jnp.asarray(np.repeat(np.arange(height), width), jnp.int8)
    cols = jnp.asarray(np.tile(np.arange(width), height), jnp.int8)
    index = jnp.arange(cells, dtype=jnp.int32)

    def area(limits: Int32[Array, "2"]) -> Bool[Array, " C"]:
        limits = limits.astype(jnp.int8)
        return (rows < limits[0]) & (cols < limits[1])

    flooded = unpack_columns_flat(region, height) != 0
    base_grid = jnp.where(plan["copy_input"], input_grid.reshape(cells), grid.reshape(cells))
    content = jnp.where(
        flooded,
        plan["colour"],
        jnp.where(
            index == plan["target"],
            plan["placed"],
            jnp.where(
                index == plan["point"],
                plan["point_value"],
                jnp.where(plan["zeroes_all"] | ~area(plan["base_shape"]), jnp.int8(0), base_grid),
            ),
        ),
    )
    # Computed once, flat (the loop over H*W vectorises), then read by the similarity checks.
    new_grid = materialize_fused(jnp.where(area(plan["new_area"]), content, jnp.int8(-1)))
    new_grid = new_grid.reshape(height, width)
    new_selection = (index == plan["selection"]) | (
        plan["keeps_selection"] & state.selection.reshape(cells)
    )
    new_selection = materialize_fused(new_selection).reshape(height, width)

    # COPY/CUT of one cell: the clipboard is that cell at (0, 0), selected.
    new_clipboard = state.clipboard.at[0, 0].set(plan["clip_value"])
    new_clipboard_mask = state.clipboard_mask.at[0, 0].set(
        plan["copies"] | state.clipboard_mask[0, 0]
    )
    return GridState(
        grid=new_grid,
        shape=plan["new_shape"],
        selection=new_selection,
        clipboard=new_clipboard,
        clipboard_mask=new_clipboard_mask,
    )
