"""A state-based expert for bbox actions: the next action of a shortest fix, any family.

:func:`state_expert_action` looks only at the working grid and the target (never at the
family that made the task) and picks, in this order:

1. ``SUBMIT`` when the working grid equals the target;
2. a whole-grid geometric operation (the four ``MOVE_*``, ``FLIP_LR``, ``FLIP_TB``,
   ``ROTATE_CW``, ``ROTATE_CCW``, the first in this order) whose result is the target;
3. the paint expert's flood if one or two such floods reach the target;
4. the first operation of a two-step whole-grid sequence of those operations that reaches
   the target, preferring FLIP_LR then FLIP_TB (a 180-degree rotation), then the same MOVE
   twice (a shift of two cells), then any other pair in a fixed order;
5. otherwise the paint expert's flood (:func:`paint_expert_action`: the first differing
   cell, its target colour, as a 1x1 box).

The candidates are computed with the grid kernel's own :func:`apply_operation` on the
whole-grid box, so the expert agrees with the environment by construction. From the start
grid of every ``gen/medium`` family it plays exactly :func:`jaxarc.data.generators.oracle_actions`'
sequence (tested), and from any other grid it still finds a shortest fix within two
whole-grid steps, so it can label states the policy reached itself. Branch-free: the
candidates are evaluated for every state and selected with ``where`` (jit/vmap clean).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int8, Int32

from jaxarc.envs.episode import area_mask
from jaxarc.envs.structured_actions import BboxAction
from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operations import GridState, apply_operation

# Whole-grid operations the expert tries, in order of preference (ties: the first wins).
# A MOVE comes first: an object at a grid's edge can make a flip look like its last shift.
WHOLE_GRID_CANDIDATES: tuple[int, ...] = (
    ops.MOVE_UP,
    ops.MOVE_DOWN,
    ops.MOVE_LEFT,
    ops.MOVE_RIGHT,
    ops.FLIP_LR,
    ops.FLIP_TB,
    ops.ROTATE_CW,
    ops.ROTATE_CCW,
)


def _two_step_priority() -> np.ndarray:
    """Order in which two-step sequences ``(a, b)`` are preferred (lower first): FLIP_LR then
    FLIP_TB (the 180-degree rotation), then the same MOVE twice, then any other pair."""
    k = len(WHOLE_GRID_CANDIDATES)
    priority = 100 + np.arange(k * k).reshape(k, k)
    index = WHOLE_GRID_CANDIDATES.index
    priority[index(ops.FLIP_LR), index(ops.FLIP_TB)] = 0
    for rank, move in enumerate(range(ops.MOVE_UP, ops.MOVE_RIGHT + 1)):
        priority[index(move), index(move)] = 1 + rank
    return priority


TWO_STEP_PRIORITY = _two_step_priority()


def whole_grid_results(
    grid: Int8[Array, "H W"], shape: Int32[Array, " 2"]
) -> tuple[Int8[Array, "K H W"], Int32[Array, "K 2"]]:
    """The grid (and its shape) after each of :data:`WHOLE_GRID_CANDIDATES` applied to the
    whole-grid box, as the environment applies it."""
    selection = area_mask(shape, grid.shape)
    state = GridState.create(grid, shape)
    candidates = jnp.asarray(WHOLE_GRID_CANDIDATES, jnp.int32)

    def one(op):
        new = apply_operation(state, op, selection, grid, shape)
        return new.grid, new.shape

    return jax.vmap(one)(candidates)


def _paint_fix(grid: Int8[Array, "H W"], target: Int8[Array, "H W"]):
    """FLOOD the first differing cell with its target colour (or SUBMIT), as a 1x1 box."""
    differs = (grid != target) & (target >= 0)
    flat = jnp.argmax(differs.reshape(-1)).astype(jnp.int32)
    width = grid.shape[1]
    row, col = flat // width, flat % width
    any_wrong = jnp.any(differs)
    colour = jnp.maximum(target[row, col], 0).astype(jnp.int32)
    operation = jnp.where(any_wrong, ops.FLOOD_0 + colour, ops.SUBMIT).astype(jnp.int32)
    return operation, jnp.where(any_wrong, row, 0), jnp.where(any_wrong, col, 0)


def _flood_once(grid, shape, target):
    """The paint fix's action and the grid after it."""
    operation, row, col = _paint_fix(grid, target)
    rows = jnp.arange(grid.shape[0], dtype=jnp.int32)[:, None]
    cols = jnp.arange(grid.shape[1], dtype=jnp.int32)[None, :]
    selection = (rows == row) & (cols == col)
    new = apply_operation(GridState.create(grid, shape), operation, selection, grid, shape)
    return (operation, row, col), new.grid, new.shape


def state_expert_action(
    grid: Int8[Array, "H W"],
    shape: Int32[Array, " 2"],
    target: Int8[Array, "H W"],
    target_shape: Int32[Array, " 2"],
) -> BboxAction:
    """The next bbox action of a shortest fix from ``grid`` to ``target`` (see the module
    docstring). Shapes are the grids' active areas."""
    same = lambda g, s: jnp.all(g == target) & jnp.all(s == target_shape)  # noqa: E731
    solved = same(grid, shape)
    one_grids, one_shapes = whole_grid_results(grid, shape)  # [K, H, W]
    one_hits = jax.vmap(same)(one_grids, one_shapes)  # [K]
    two_grids, two_shapes = jax.vmap(whole_grid_results)(one_grids, one_shapes)  # [K, K, H, W]
    two_hits = jax.vmap(jax.vmap(same))(two_grids, two_shapes)  # [K, K]
    ranked = jnp.where(two_hits, jnp.asarray(TWO_STEP_PRIORITY), jnp.iinfo(jnp.int32).max)
    two_first = jnp.argmin(ranked.reshape(-1)) // len(WHOLE_GRID_CANDIDATES)
    # does painting fix it in one or two floods? (then it is at least as short as two
    # whole-grid steps, and it is what the oracle does)
    (paint_op, row, col), painted, painted_shape = _flood_once(grid, shape, target)
    _, twice, twice_shape = _flood_once(painted, painted_shape, target)
    paint_short = same(painted, painted_shape) | same(twice, twice_shape)
    candidates = jnp.asarray(WHOLE_GRID_CANDIDATES, jnp.int32)
    one_step = jnp.any(one_hits)
    two_step = jnp.any(two_hits) & ~paint_short
    geometric = jnp.where(one_step, candidates[jnp.argmax(one_hits)], candidates[two_first])
    use_geometric = ~solved & (one_step | two_step)
    operation = jnp.where(use_geometric, geometric, paint_op)
    operation = jnp.where(solved, ops.SUBMIT, operation).astype(jnp.int32)
    last_row, last_col = shape[0] - 1, shape[1] - 1
    zero = jnp.int32(0)
    return BboxAction(
        operation=operation,
        r1=jnp.where(use_geometric, zero, row).astype(jnp.int32),
        c1=jnp.where(use_geometric, zero, col).astype(jnp.int32),
        r2=jnp.where(use_geometric, last_row, row).astype(jnp.int32),
        c2=jnp.where(use_geometric, last_col, col).astype(jnp.int32),
    )
