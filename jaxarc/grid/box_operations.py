"""The 35 grid operations for rectangle (bbox) and mask selections, on the flat canvas.

:func:`~jaxarc.grid.operations.apply_operation` is the reference. It works on ``[H, W]``
arrays, derives the selection's bounding box with row and column reductions (scalar loops
on XLA:CPU) and computes the flood fill's link words for every environment. Here:

* every per-cell computation is one elementwise pass over the flattened ``H*W`` canvas (a
  long contiguous loop that vectorises; XLA:CPU loops over a fusion's result shape), fed by
  per-environment scalars computed once (:func:`~jaxarc.grid.fusion_barrier.materialize`);
  areas and boxes are tested against int8 row/column constants, not built as masks;
* a bbox action's selection is the rectangle of its corners cut to the active area, so its
  box, its flood seeds (one word per column) and RESIZE's corner are scalar arithmetic;
  a mask's box comes from its column words (``clz``/``ctz`` of their OR), not reductions
  over the cells;
* the flood fill reads only the grids of the environments that flood, and returns the
  region as a cell stream that the flat pass unpacks with shifts
  (:mod:`jaxarc.grid.flood_rows`).

The coordinate-map family (MOVE, ROTATE, FLIP, COPY, CUT, PASTE) reads through the same
:class:`~jaxarc.grid.geometry.CoordinateMap` as the generic path. Results are the
:class:`~jaxarc.grid.operations.GridState` the generic path gives for the same selection
mask, on every field (the parity tests compare both on random episodes).
``functional`` picks :func:`apply_box_operation` / :func:`apply_mask_operation` statically,
from ``config.action.selection_format``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtyping import Array, Bool, Int8, Int32, UInt32

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.bit_rows import WORD_BITS, check_width, pack_columns, unpack_stream_flat
from jaxarc.grid.flood_rows import flood_box_rows, flood_seed_rows
from jaxarc.grid.fusion_barrier import materialize, materialize_array
from jaxarc.grid.geometry import CoordinateMap, SelectionBox, orient_window
from jaxarc.grid.lanes import where_flagged
from jaxarc.grid.operations import GridState, coordinate_map

_MARK = 16  # as in the generic path: the gathered source packs colour + _MARK * selected


def _in_range(op: Int32[Array, ""], first: int, last: int) -> Bool[Array, ""]:
    return (op >= first) & (op <= last)


def _bit_span(first: Int32[Array, ""], last: Int32[Array, ""]) -> UInt32[Array, ""]:
    """The word with bits ``first..last`` set (0 when ``last < first``); ``0 <= first``."""
    ones = jnp.uint32(0xFFFFFFFF)
    high = jnp.right_shift(
        ones, jnp.clip(WORD_BITS - 1 - last, 0, WORD_BITS - 1).astype(jnp.uint32)
    )
    low = jnp.left_shift(ones, jnp.clip(first, 0, WORD_BITS - 1).astype(jnp.uint32))
    return jnp.where(last >= first, high & low, jnp.uint32(0))


def _check(state: GridState, input_grid: Int8[Array, "H W"], name: str) -> tuple[int, int]:
    height, width = state.grid.shape
    check_width(width)
    check_width(height, "height")
    if input_grid.shape != (height, width):
        raise ValueError(
            f"{name}: input_grid {input_grid.shape} must match the canvas {(height, width)} "
            "(no batch axis: vmap over environments)"
        )
    return height, width


def apply_box_operation(
    state: GridState,
    operation: Int32[Array, ""],
    r1: Int32[Array, ""],
    c1: Int32[Array, ""],
    r2: Int32[Array, ""],
    c2: Int32[Array, ""],
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
) -> GridState:
    """:func:`~jaxarc.grid.operations.apply_operation` for the rectangle with corners
    ``(r1, c1)`` and ``(r2, c2)`` (any order, inclusive; cells off the canvas select nothing).

    One environment (``vmap`` over a batch); branch-free.
    """
    height, width = _check(state, input_grid, "apply_box_operation")
    r1, c1, r2, c2 = (jnp.asarray(x, jnp.int32) for x in (r1, c1, r2, c2))
    top, bottom = jnp.maximum(jnp.minimum(r1, r2), 0), jnp.maximum(r1, r2)
    left, right = jnp.maximum(jnp.minimum(c1, c2), 0), jnp.maximum(c1, c2)
    # RESIZE reads the raw rectangle on the canvas; everything else its cut to the active area.
    raw_bottom, raw_right = jnp.minimum(bottom, height - 1), jnp.minimum(right, width - 1)
    raw_any = (top <= raw_bottom) & (left <= raw_right)
    shape = state.shape.astype(jnp.int32)
    sel_bottom = jnp.minimum(raw_bottom, shape[0] - 1)
    sel_right = jnp.minimum(raw_right, shape[1] - 1)
    has = (top <= sel_bottom) & (left <= sel_right)
    box = SelectionBox(  # SelectionBox.of's empty box when nothing is selected
        top=jnp.where(has, top, height),
        bottom=jnp.where(has, sel_bottom, -1),
        left=jnp.where(has, left, width),
        right=jnp.where(has, sel_right, -1),
    )
    op = jnp.asarray(operation, jnp.int32)
    floods = _in_range(op, ops.FLOOD_0, ops.FLOOD_0 + 9)
    limits = jnp.stack([box.top, box.bottom, box.left, box.right])
    region = flood_box_rows(state.grid, limits, floods)  # cell stream words, 0 unless flooding
    return _apply_flat(
        state,
        op,
        box,
        raw_any,
        jnp.stack([raw_bottom, raw_right]),
        None,
        region,
        input_grid,
        input_shape,
    )


def apply_mask_operation(
    state: GridState,
    operation: Int32[Array, ""],
    selection: Bool[Array, "H W"],
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
) -> GridState:
    """:func:`~jaxarc.grid.operations.apply_operation` on the flat canvas (any selection mask).

    One environment (``vmap`` over a batch); branch-free.
    """
    height, width = _check(state, input_grid, "apply_mask_operation")
    if selection.shape != (height, width):
        raise ValueError(
            f"apply_mask_operation: selection {selection.shape} must match the canvas "
            f"{(height, width)} (no batch axis: vmap over environments)"
        )
    op = jnp.asarray(operation, jnp.int32)
    shape = state.shape.astype(jnp.int32)
    rows = jnp.asarray(np.repeat(np.arange(height), width), jnp.int8)
    cols = jnp.asarray(np.tile(np.arange(width), height), jnp.int8)
    area = jnp.clip(shape, 0, max(height, width)).astype(jnp.int8)
    raw = selection.reshape(height * width)
    selected = materialize_array(raw & (rows < area[0]) & (cols < area[1]))
    # Column words (elementwise across columns), then the boxes from a few word operations.
    raw_words = materialize(pack_columns(selection))
    # The active area's rows as one word, its columns as a [W] mask: cut the raw words.
    column = jnp.arange(width, dtype=jnp.int32)
    active_rows = _bit_span(jnp.int32(0), jnp.minimum(shape[0], height) - 1)
    words = jnp.where(column < shape[1], raw_words & active_rows, jnp.uint32(0))
    raw_box, box = _box_of_words(raw_words, height), _box_of_words(words, height)
    floods = _in_range(op, ops.FLOOD_0, ops.FLOOD_0 + 9)
    seeds = jnp.where(floods, words, jnp.uint32(0))
    region = flood_seed_rows(state.grid, seeds)  # cell stream words, 0 unless flooding
    raw_corner = jnp.stack([raw_box.bottom, raw_box.right])
    return _apply_flat(
        state, op, box, raw_box.bottom >= 0, raw_corner, selected, region, input_grid, input_shape
    )


def _in_rect(rows, cols, limits: Int8[Array, "4"]) -> Bool[Array, " C"]:
    """Cells in the half-open rectangle ``[limits[0], limits[1]) x [limits[2], limits[3])``."""
    return (rows >= limits[0]) & (rows < limits[1]) & (cols >= limits[2]) & (cols < limits[3])


def _clipboard_of(
    limits: Int8[Array, "4"], shifted: Int8[Array, " C"], height: int, width: int
) -> tuple[Int8[Array, " C"], Bool[Array, " C"]]:
    """COPY/CUT's clipboard: the mapped cells (half-open ``limits``) of the shifted window,
    their marks selected."""
    rows = jnp.asarray(np.repeat(np.arange(height), width), jnp.int8)
    cols = jnp.asarray(np.tile(np.arange(width), height), jnp.int8)
    in_mapped = _in_rect(rows, cols, limits)
    values = jnp.where(in_mapped, shifted & jnp.int8(_MARK - 1), jnp.int8(-1))
    return values, in_mapped & (shifted >= jnp.int8(_MARK))


def _shifted_source(
    mapping: CoordinateMap,
    paste: Bool[Array, ""],
    grid: Int8[Array, " C"],
    clipboard: Int8[Array, " C"],
    clipboard_mask: Bool[Array, " C"],
    selection: Bool[Array, " C"] | Int8[Array, "4"],
    height: int,
    width: int,
) -> Int8[Array, " S"]:
    """The coordinate map's shifted window of the packed source: the clipboard (PASTE) or
    the grid, ``+ _MARK`` where its mask or the selection is set. ``selection`` is a flat mask
    or a rectangle's inclusive limits (``top, bottom, left, right``)."""
    if selection.shape == (4,):
        rows = jnp.asarray(np.repeat(np.arange(height), width), jnp.int8)
        cols = jnp.asarray(np.tile(np.arange(width), height), jnp.int8)
        top, bottom, left, right = (selection[k] for k in range(4))
        selection = (rows >= top) & (rows <= bottom) & (cols >= left) & (cols <= right)
    marked = jnp.where(paste, clipboard_mask, selection)
    values = jnp.where(paste, clipboard, grid)
    packed = jnp.maximum(values, jnp.int8(0)) + jnp.where(marked, jnp.int8(_MARK), jnp.int8(0))
    return mapping.shift_flat(packed, height, width)


def _box_of_words(words: UInt32[Array, " W"], height: int) -> SelectionBox:
    """:meth:`SelectionBox.of` of the mask whose column words are ``words``."""
    width = words.shape[0]
    column = jnp.arange(width, dtype=jnp.int32)
    hit = words != 0
    rows = lax.reduce(words, jnp.uint32(0), lax.bitwise_or, (0,))
    any_row = rows != 0
    lowest = lax.population_count((rows & (~rows + jnp.uint32(1))) - jnp.uint32(1))
    highest = jnp.int32(WORD_BITS - 1) - lax.clz(rows).astype(jnp.int32)
    return SelectionBox(
        top=jnp.where(any_row, lowest.astype(jnp.int32), jnp.int32(height)),
        bottom=jnp.where(any_row, highest, jnp.int32(-1)),
        left=jnp.min(jnp.where(hit, column, jnp.int32(width))),
        right=jnp.max(jnp.where(hit, column, jnp.int32(-1))),
    )


def _apply_flat(
    state: GridState,
    op: Int32[Array, ""],
    box: SelectionBox,
    raw_any: Bool[Array, ""],
    raw_corner: Int32[Array, "2"],
    selected: Bool[Array, " C"] | None,
    region: UInt32[Array, " M"],
    input_grid: Int8[Array, "H W"],
    input_shape: Int32[Array, "2"],
) -> GridState:
    """The shared flat pass. ``selected`` (the selection cut to the active area, flat) is
    ``None`` for a rectangle: then it is exactly ``box``, tested per cell from its scalars."""
    height, width = state.grid.shape
    side = max(height, width)
    cells = height * width
    if selected is None:  # an empty box (top = H) fails the test; H, W fit in an int8
        box = SelectionBox(
            top=jnp.minimum(box.top, side),
            bottom=box.bottom,
            left=jnp.minimum(box.left, side),
            right=box.right,
        )
    shape = state.shape.astype(jnp.int32)
    has_selection = box.bottom >= 0
    is_move = _in_range(op, ops.MOVE_UP, ops.MOVE_RIGHT)
    is_box_transform = _in_range(op, ops.ROTATE_CW, ops.FLIP_TB)
    is_paste = op == ops.PASTE
    resizing = (op == ops.RESIZE) & raw_any
    base_shape = jnp.where(op == ops.COPY_INPUT, input_shape.astype(jnp.int32), shape)
    new_shape = jnp.where(resizing, raw_corner + 1, base_shape)
    mapping = coordinate_map(op, box, height, width)
    translation = (mapping.rr == 1) & (mapping.cc == 1)
    # The mapped rectangle (half-open), as in CoordinateMap.mapped_spans.
    mapped = (
        jnp.maximum(mapping.rect_top, jnp.where(translation, -mapping.row0, 0)),
        jnp.minimum(mapping.rect_bottom, jnp.where(translation, height - mapping.row0, height)),
        jnp.maximum(mapping.rect_left, jnp.where(translation, -mapping.col0, 0)),
        jnp.minimum(mapping.rect_right, jnp.where(translation, width - mapping.col0, width)),
    )

    def limit(x):  # a bound of a half-open or inclusive range, in int8 without changing tests
        return jnp.clip(x, -1, side).astype(jnp.int8)

    plan = materialize(
        {
            "fill": _in_range(op, ops.FILL_0, ops.FILL_0 + 9),
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
            "zeroes_box": is_box_transform,
            "new_shape": new_shape,
            "old": limit(shape),
            "base": limit(base_shape),
            "new": limit(new_shape),
            "box": jnp.stack(
                [limit(box.top), limit(box.bottom), limit(box.left), limit(box.right)]
            ),
            "mapped": jnp.stack([limit(x) for x in mapped]),
            "map": mapping,
            "variant": mapping.variant(),
        }
    )
    rows = jnp.asarray(np.repeat(np.arange(height), width), jnp.int8)
    cols = jnp.asarray(np.tile(np.arange(width), height), jnp.int8)

    def area(limits):
        return (rows < limits[0]) & (cols < limits[1])

    box_limits, mapped_limits = plan["box"], plan["mapped"]
    in_box = (
        (rows >= box_limits[0])
        & (rows <= box_limits[1])
        & (cols >= box_limits[2])
        & (cols <= box_limits[3])
    )
    box_selection = selected is None
    if box_selection:
        selected = in_box
    in_mapped = _in_rect(rows, cols, mapped_limits)
    old_active, base_active, new_active = area(plan["old"]), area(plan["base"]), area(plan["new"])
    grid = state.grid.reshape(cells)
    clipboard = state.clipboard.reshape(cells)
    clipboard_mask = state.clipboard_mask.reshape(cells)

    flooded = unpack_stream_flat(region, cells) != 0
    painted = (selected & plan["fill"]) | flooded
    # The coordinate map, only for the environments that use it (MOVE, ROTATE, FLIP, COPY,
    # CUT, PASTE: 11 of 35 operations): the source (colour + _MARK where selected) packed and
    # one shifted window of it, then the flip or rotation only for those that rotate or flip
    # (translations read the window itself). Other environments never read the window (they
    # place nothing and copy nothing): zeros there (a fresh buffer: the grid would be copied).
    uses_map = plan["places"] | plan["copies"]
    # A rectangle's selection is rebuilt from its limits inside (not materialised per cell).
    selection = box_limits if box_selection else selected
    source = (plan["paste"], grid, clipboard, clipboard_mask, selection)
    # (fn may close over static values only: the canvas constants are rebuilt inside it)
    shift = lambda *args: _shifted_source(*args, height, width)  # noqa: E731
    if side == height == width:  # the window is the flat canvas (else it is square-padded)
        shifted = where_flagged(uses_map, shift, jnp.zeros_like(grid), plan["map"], *source)
    else:
        shifted = shift(plan["map"], *source)
    window = shifted.reshape(side, side)
    oriented = orient_window(window, plan["variant"])[:height, :width].reshape(cells)
    shifted = window[:height, :width].reshape(cells)
    shifted_mark = shifted >= jnp.int8(_MARK)
    can_place = in_mapped & (shifted_mark | ~plan["needs_mark"]) & plan["places"] & old_active
    zeroed = plan["clears"] | (selected & plan["zeroes_selected"]) | (in_box & plan["zeroes_box"])
    base_grid = jnp.where(plan["copy_input"], input_grid.reshape(cells), grid)
    content = jnp.where(
        painted,
        plan["colour"],
        jnp.where(
            can_place,
            oriented & jnp.int8(_MARK - 1),
            jnp.where(zeroed | ~base_active, jnp.int8(0), base_grid),
        ),
    )
    new_grid = materialize_array(jnp.where(new_active, content, jnp.int8(-1)))
    # COPY/CUT (2 of 35 operations) rewrite the clipboard: only theirs is computed.
    # (fn may close over static values only: the canvas constants are rebuilt inside it)
    clip = lambda limits, window: _clipboard_of(limits, window, height, width)  # noqa: E731
    new_clipboard, new_clipboard_mask = where_flagged(
        plan["copies"], clip, (clipboard, clipboard_mask), mapped_limits, shifted
    )
    new_selection = jnp.where(plan["moves"], can_place, selected & new_active)
    new_selection = jnp.where(plan["edits"], new_selection, state.selection.reshape(cells))
    return GridState(
        grid=new_grid.reshape(height, width),
        shape=plan["new_shape"],
        selection=new_selection.reshape(height, width),
        clipboard=new_clipboard.reshape(height, width),
        clipboard_mask=new_clipboard_mask.reshape(height, width),
    )
