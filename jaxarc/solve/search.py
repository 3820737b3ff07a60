"""Breadth-first search over sequences of environment actions, pruned by equivalence.

A node is what a sequence of candidate actions (:mod:`jaxarc.solve.candidates`) makes of
*every* grid of a task at once: each demonstration input and each test input, with its
clipboard. Level ``d`` holds the nodes reached by ``d`` actions; a child whose grids (and
clipboards) equal a node already seen is dropped (equivalent sequences are one node, no-ops
included). A node is a **solution** when every demonstration input has become its output.
The test grids of a node are part of it, so two solutions with the same demonstration
grids but different test grids are both kept: the first two solutions with different test
grids are the two attempts.

The actions are applied with the environment's own step code
(:func:`jaxarc.envs.transition.apply_action` after the step's normalisation and operation
check), ``vmap``-ed over grids and over a chunk of (node, candidate) children; each child is
keyed by two 32-bit hashes of its grids. To run fast on a CPU a task is searched on the
smallest canvas of :data:`CANVAS_SIDES` that holds its grids (operations act inside the
active area, so the canvas changes no result: :func:`jaxarc.solve.replay.replay_on_task`
replays every solution on the environment's 30x30 canvas and keeps only those that still
solve the demonstrations there).
"""

from __future__ import annotations

import dataclasses
import functools
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float32, Int8, Int32, UInt32

from jaxarc.envs.config import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.envs.structured_actions import BboxAction
from jaxarc.envs.transition import apply_action, effective_operation
from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operations import GridState
from jaxarc.solve.candidates import candidate_actions
from jaxarc.solve.canvas import CANVAS_SIDES, bucket
from jaxarc.solve.problem import MAX_SIDE, Problem

GRID_SLOTS = (4, 6, 13)  # grids per node (demonstrations + tests), padded up to one of these
CHUNK = 1024  # children evaluated per call
MAX_FRONTIER = 20_000  # nodes of one level kept for expansion


def search_config(side: int) -> JaxArcConfig:
    """The environment config the search applies actions with: bbox actions, every
    operation allowed, a ``side`` x ``side`` canvas."""
    return JaxArcConfig(
        dataset=UnifiedDatasetConfig(side, side),
        action=UnifiedActionConfig(selection_format="bbox"),
    )


class _Children(eqx.Module):
    """What one call computes for a chunk of children."""

    states: GridState
    key_all: UInt32[Array, "B 2"]
    key_tests: UInt32[Array, " B"]
    solved: Bool[Array, " B"]
    score: Float32[Array, " B"]


@functools.cache
def _expand_program(side: int):
    config = search_config(side)
    canvas = (side, side)

    def expand(
        parents: GridState,  # leaves [B, G, ...]
        actions: Int32[Array, "B G 5"],
        inputs: Int8[Array, "G H W"],
        input_shapes: Int32[Array, "G 2"],
        targets: Int8[Array, "G H W"],
        demo: Bool[Array, " G"],
        weights: UInt32[Array, "3 G H W"],
    ) -> _Children:
        def one_grid(state: GridState, action: Int32[Array, "5"], grid, shape) -> GridState:
            act = BboxAction(action[0], action[1], action[2], action[3], action[4])
            act = act.normalized(canvas)
            operation = effective_operation(act.operation, jnp.asarray(True), config)
            return apply_action(state, operation, act, grid, shape, config)

        def child(parent: GridState, action: Int32[Array, "G 5"]) -> GridState:
            return jax.vmap(one_grid)(parent, action, inputs, input_shapes)

        children = jax.vmap(child)(parents, actions)
        cells = (
            (children.grid.astype(jnp.int32) + 1)
            + 11 * (children.clipboard.astype(jnp.int32) + 1)
            + 121 * children.clipboard_mask.astype(jnp.int32)
        ).astype(jnp.uint32)
        key_all = jnp.stack(
            [jnp.sum(cells * w[None], axis=(1, 2, 3)) for w in (weights[0], weights[1])], axis=1
        )
        tests = ~demo & jnp.any(weights[0] != 0, axis=(1, 2))
        grid_only = (children.grid.astype(jnp.int32) + 1).astype(jnp.uint32)
        test_weights = jnp.where(tests[:, None, None], weights[2], jnp.uint32(0))
        key_tests = jnp.sum(grid_only * test_weights[None], axis=(1, 2, 3))
        equal = children.grid == targets[None]
        matched = jnp.all(equal, axis=(2, 3))
        solved = jnp.all(matched | ~demo[None], axis=1)
        union = (children.grid >= 0) | (targets[None] >= 0)
        right = jnp.sum(equal & union, axis=(2, 3)).astype(jnp.float32)
        accuracy = right / jnp.maximum(jnp.sum(union, axis=(2, 3)), 1).astype(jnp.float32)
        per_demo = matched.astype(jnp.float32) + accuracy
        demos = jnp.maximum(jnp.sum(demo), 1).astype(jnp.float32)
        score = jnp.sum(jnp.where(demo[None], per_demo, jnp.float32(0)), axis=1) / demos
        return _Children(
            children,
            key_all,
            key_tests,
            solved,
            score.astype(jnp.float32),
        )

    return jax.jit(expand)


@dataclasses.dataclass
class SearchResult:
    """The search's outcome on one task.

    ``solutions``: action sequences (``[length, N, 5]``: per step, one row
    ``(operation, r1, c1, r2, c2)`` per grid, demonstration inputs then test inputs) that
    turn every demonstration input into its output, shortest first, with pairwise
    different test grids (at most ``max_solutions``). ``best_partial``: the sequence whose
    demonstration grids came closest (exact matches first, then cells), for a task with
    fewer solutions than attempts. ``sequences``: children evaluated; ``nodes``: distinct
    nodes kept; ``complete``: the search covered every level up to ``depth`` (no budget or
    frontier cap cut it short).
    """

    solutions: list[np.ndarray]
    best_partial: np.ndarray
    candidates: int
    sequences: int
    nodes: int
    depth: int
    complete: bool
    seconds: float


def pad_slots(grids, slots: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    """``grids`` padded to ``[slots, side, side]`` (``-1`` outside a grid; unused slots a
    1x1 grid of colour 0) and their shapes ``[slots, 2]``."""
    padded = np.full((slots, side, side), -1, np.int8)
    shapes = np.ones((slots, 2), np.int32)
    for k, grid in enumerate(grids):
        padded[k, : grid.shape[0], : grid.shape[1]] = grid
        shapes[k] = grid.shape
    padded[len(grids) :, 0, 0] = 0  # unused slots: a 1x1 grid of colour 0
    return padded, shapes


def _sequence(parents: list[int], actions: list[np.ndarray], node: int, grids: int) -> np.ndarray:
    steps = []
    while node > 0:
        steps.append(actions[node][:grids])
        node = parents[node]
    return np.asarray(steps[::-1], np.int32).reshape(-1, grids, 5)


def per_grid_table(candidates: np.ndarray, grids: int) -> Int32[np.ndarray, "C N 5"]:
    """A candidate table as ``[C, N, 5]``: a ``[C, 5]`` table (one action for every grid)
    is repeated over the ``grids`` grids."""
    table = np.asarray(candidates, np.int32)
    if table.ndim == 2:
        table = np.repeat(table[:, None], grids, 1)
    if table.ndim != 3 or table.shape[1:] != (grids, 5):
        raise ValueError(f"candidates of shape {table.shape}; expected [C, 5] or [C, {grids}, 5]")
    return table


def search(
    problem: Problem,
    depth: int,
    *,
    seconds: float | None = None,
    max_sequences: int | None = None,
    max_solutions: int = 2,
    candidates: np.ndarray | None = None,
) -> SearchResult:
    """Search ``problem`` to ``depth`` actions (see the module docstring); stop early after
    ``seconds`` or ``max_sequences`` children, or once ``max_solutions`` are found."""
    start = time.perf_counter()
    grids = [*problem.demo_inputs, *problem.test_inputs]
    actions_table = per_grid_table(
        candidate_actions(problem) if candidates is None else candidates, len(grids)
    )
    outputs = list(problem.demo_outputs)
    resized = actions_table[actions_table[..., 0] == ops.RESIZE][:, 3:] + 1
    largest = max(max(g.shape) for g in grids + outputs)
    side = bucket(min(max(largest, int(resized.max(initial=1))), MAX_SIDE), CANVAS_SIDES)
    slots = bucket(len(grids), GRID_SLOTS)
    # unused grid slots play the first grid's action (their grids never tell nodes apart)
    actions_table = np.concatenate(
        [actions_table, np.repeat(actions_table[:, :1], slots - len(grids), 1)], axis=1
    )
    inputs, input_shapes = pad_slots(grids, slots, side)
    targets, _ = pad_slots(outputs, slots, side)
    demo = np.arange(slots) < problem.num_demos
    targets[~demo] = -1
    rng = np.random.default_rng(0)
    weights = rng.integers(0, 2**32, (3, slots, side, side), dtype=np.uint64).astype(np.uint32)
    weights |= np.uint32(1)  # odd: no weight is 0 on a used slot
    weights[:, len(grids) :] = 0  # unused slots never tell nodes apart
    root = jax.vmap(GridState.create)(jnp.asarray(inputs), jnp.asarray(input_shapes))
    frontier = jax.tree.map(lambda x: np.asarray(x)[None], root)
    constants = (
        jnp.asarray(inputs),
        jnp.asarray(input_shapes),
        jnp.asarray(targets),
        jnp.asarray(demo),
        jnp.asarray(weights),
    )
    program = _expand_program(side)
    noop = np.tile(np.array([-1, 0, 0, 0, 0], np.int32), (slots, 1))  # the root's key
    first = program(
        jax.tree.map(lambda x: jnp.asarray(np.repeat(x, CHUNK, 0)), frontier),
        jnp.asarray(np.tile(noop, (CHUNK, 1, 1))),
        *constants,
    )
    seen = {tuple(np.asarray(first.key_all)[0])}
    parents, steps = [0], [noop]
    frontier_nodes = [0]
    solutions: list[int] = []
    solution_tests: set[int] = set()
    best = (float(first.score[0]), 0)
    if bool(first.solved[0]):  # the inputs are the outputs already: no action is a solution
        solutions.append(0)
        solution_tests.add(int(first.key_tests[0]))
    sequences, complete = 0, True
    num_candidates = actions_table.shape[0]
    for level in range(1, depth + 1):
        keep = level < depth
        total = len(frontier_nodes) * num_candidates
        next_states, next_nodes = [], []
        for begin in range(0, total, CHUNK):
            if (seconds is not None and time.perf_counter() - start > seconds) or (
                max_sequences is not None and sequences >= max_sequences
            ):
                complete = False
                break
            rows = np.arange(begin, min(begin + CHUNK, total))
            count = rows.size
            rows = np.pad(rows, (0, CHUNK - count))
            parent_rows, candidate_rows = np.divmod(rows, num_candidates)
            parent_states = jax.tree.map(lambda x, p=parent_rows: jnp.asarray(x[p]), frontier)
            chunk_actions = actions_table[candidate_rows]
            out = program(parent_states, jnp.asarray(chunk_actions), *constants)
            sequences += count
            key_all = np.asarray(out.key_all)[:count]
            key_tests = np.asarray(out.key_tests)[:count]
            solved = np.asarray(out.solved)[:count]
            score = np.asarray(out.score)[:count]
            fresh = []
            for k in range(count):
                key = (int(key_all[k, 0]), int(key_all[k, 1]))
                if key in seen:
                    continue
                seen.add(key)
                node = len(parents)
                parents.append(frontier_nodes[parent_rows[k]])
                steps.append(chunk_actions[k])
                fresh.append(k)
                if solved[k]:
                    if int(key_tests[k]) not in solution_tests:
                        solution_tests.add(int(key_tests[k]))
                        solutions.append(node)
                elif score[k] > best[0]:
                    best = (float(score[k]), node)
            if keep and fresh:
                picked = np.asarray(fresh)
                next_states.append(jax.tree.map(lambda x, p=picked: np.asarray(x)[p], out.states))
                next_nodes += [len(parents) - len(fresh) + i for i in range(len(fresh))]
            if len(solutions) >= max_solutions:
                break
        if len(solutions) >= max_solutions or not complete or not keep or not next_nodes:
            break
        if len(next_nodes) > MAX_FRONTIER:
            complete = False
            next_nodes = next_nodes[:MAX_FRONTIER]
        frontier = jax.tree.map(lambda *xs: np.concatenate(xs)[:MAX_FRONTIER], *next_states)
        frontier_nodes = next_nodes
    return SearchResult(
        solutions=[
            _sequence(parents, steps, node, len(grids)) for node in solutions[:max_solutions]
        ],
        best_partial=_sequence(parents, steps, best[1], len(grids)),
        candidates=num_candidates,
        sequences=sequences,
        nodes=len(parents),
        depth=depth,
        complete=complete,
        seconds=time.perf_counter() - start,
    )
