"""Throughput of ``apply_operation``: vmap over a batch, ``lax.scan`` over steps.

Run: ``python benchmarks/operations.py [--batch 4096] [--steps 100] [--canvas 30]``.
Prints compile time (excluded from the rates) and a table of steps per second: the whole
operation set with uniformly random operations and point selections, then each family alone
(the profile used to decide what to optimise).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.flood_fill import flood_regions
from jaxarc.grid.geometry import CoordinateMap, SelectionBox
from jaxarc.grid.operations import GridState, apply_operation


def arc_like_grids(rng: np.random.Generator, batch: int, size: int) -> np.ndarray:
    """Full-canvas grids: a background colour with a dozen random coloured rectangles."""
    grids = np.zeros((batch, size, size), np.int8)
    grids[:] = rng.integers(0, 10, (batch, 1, 1))
    for _ in range(12):
        tops, lefts = rng.integers(0, size, (2, batch))
        heights, widths = rng.integers(1, 1 + size // 4, (2, batch))
        colours = rng.integers(0, 10, batch)
        rows = np.arange(size)[None, :, None]
        cols = np.arange(size)[None, None, :]
        inside = (
            (rows >= tops[:, None, None])
            & (rows < (tops + heights)[:, None, None])
            & (cols >= lefts[:, None, None])
            & (cols < (lefts + widths)[:, None, None])
        )
        grids = np.where(inside, colours[:, None, None].astype(np.int8), grids)
    return grids


def point_mask(row: jax.Array, col: jax.Array, size: int) -> jax.Array:
    rows = lax.broadcasted_iota(jnp.int32, (size, size), 0)
    cols = lax.broadcasted_iota(jnp.int32, (size, size), 1)
    return (rows == row) & (cols == col)


def time_scan(step: Callable, carry, xs, repeats: int) -> tuple[float, float, float]:
    """(compile s, best wall s, its CPU s) of one jitted ``lax.scan(step, carry, xs)``.

    CPU seconds (all threads of this process) tell how much work a scan was: on a machine
    shared with other jobs, wall time overstates it.
    """
    run = jax.jit(lambda c, x: lax.scan(step, c, x)[0])
    start = time.perf_counter()
    compiled = run.lower(carry, xs).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(compiled(carry, xs))
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(carry, xs))
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if wall < best:
            best, best_cpu = wall, cpu
    return compile_s, best, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--canvas", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-profile", action="store_true", help="only the full operation set")
    args = parser.parse_args()
    size, batch, steps = args.canvas, args.batch, args.steps

    rng = np.random.default_rng(0)
    grids = jnp.asarray(arc_like_grids(rng, batch, size))
    shapes = jnp.full((batch, 2), size, jnp.int32)
    states = jax.vmap(GridState.create)(grids, shapes)
    points = jnp.asarray(rng.integers(0, size, (steps, batch, 2)), jnp.int32)

    def step_with(choose_op: Callable) -> Callable:
        def one_env(state, op, point):
            selection = point_mask(point[0], point[1], size)
            return apply_operation(state, op, selection, grids[0], shapes[0])

        def step(carry, x):
            ops_now, points_now = x
            return jax.vmap(one_env)(carry, choose_op(ops_now), points_now), None

        return step

    uniform_ops = jnp.asarray(rng.integers(0, ops.NUM_OPERATIONS, (steps, batch)), jnp.int32)
    rows = [("apply_operation, ops uniform over 0..34", step_with(lambda o: o), states)]
    if not args.no_profile:
        flood_ops = ops.FLOOD_0 + uniform_ops % 10
        rows += [
            ("apply_operation, FILL only (flood loop idle)", step_with(lambda o: o % 10), states),
            ("apply_operation, FLOOD only", step_with(lambda o: flood_ops[0]), states),
            ("apply_operation, MOVE only", step_with(lambda o: ops.MOVE_UP + o % 4), states),
        ]

        def family(fn: Callable) -> Callable:
            def step(carry, x):
                ops_now, points_now = x
                masks = jax.vmap(lambda p: point_mask(p[0], p[1], size))(points_now)
                return jax.vmap(fn)(carry, ops_now, masks), None

            return step

        def flood_family(grid, op, mask):
            region = flood_regions(grid, mask & (op >= ops.FLOOD_0) & (op < ops.MOVE_UP))
            return jnp.where(region, (op % 10).astype(jnp.int8), grid)

        def gather_family(grid, op, mask):
            box = SelectionBox.of(mask)
            flip = (0, 1, 0, 2 * box.left + box.width - 1, 0, -1, 0, size, 0, size)
            move = (1, 1, 0, 0, 0, 1, 0, size, 0, size)
            coordinate_map = CoordinateMap.select(op % 2, [move, flip])
            rows, cols = coordinate_map.mapped_spans(size, size)
            return jnp.where(rows[:, None] & cols[None, :], coordinate_map.gather(grid)[0], grid)

        def bbox_family(grid, op, mask):
            box = SelectionBox.of(mask)
            return jnp.where(box.mask(size, size), jnp.int8(1), grid)

        rows += [
            ("  flood_regions alone, ops uniform", family(flood_family), grids),
            (
                "  flood_regions alone, every env floods",
                family(lambda g, o, m: flood_family(g, flood_ops[0][0], m)),
                grids,
            ),
            ("  CoordinateMap.gather alone (move/flip)", family(gather_family), grids),
            ("  SelectionBox.of + where alone", family(bbox_family), grids),
        ]

    print(
        f"backend {jax.default_backend()}, {jax.device_count()} device(s), canvas {size}x{size}, "
        f"batch {batch}, {steps} steps per scan (best of {args.repeats})"
    )
    cores = os.cpu_count() or 1
    print(
        f"load average {os.getloadavg()[0]:.1f} on {cores} cores; 'CPU-bound steps/s' = "
        f"steps / (CPU seconds / {cores}): the rate if this process had the cores to itself"
    )
    print(
        f"| {'workload':46} | {'compile s':>9} | {'ms / step':>9} | {'steps/s':>12} "
        f"| {'CPU ms / step':>13} | {'CPU-bound steps/s':>17} |"
    )
    print(f"|{'-' * 48}|{'-' * 11}|{'-' * 11}|{'-' * 14}|{'-' * 15}|{'-' * 19}|")
    for name, step, carry in rows:
        compile_s, seconds, cpu = time_scan(step, carry, (uniform_ops, points), args.repeats)
        rate = batch * steps / seconds
        cpu_rate = batch * steps / (cpu / cores)
        print(
            f"| {name:46} | {compile_s:9.2f} | {1000 * seconds / steps:9.3f} | {rate:12,.0f} "
            f"| {1000 * cpu / steps:13.3f} | {cpu_rate:17,.0f} |"
        )


if __name__ == "__main__":
    main()
