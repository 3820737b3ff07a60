"""A task as the program learner plays it: its vocabulary of actions, their kinds, and the
padded arrays one compiled learning reads.

The **vocabulary** (:func:`program_vocabulary`): a no-op (so a program may be shorter), the
search's candidate actions (:mod:`jaxarc.solve.candidates`) and the actions that lay out a
tiling tile by tile (:func:`jaxarc.solve.tiling.tile_layout_actions`); with the content
language, also its items, the search's safe paints played as mask actions
(:mod:`jaxarc.solve.language.vocabulary`; a step plays a row's bbox action, then its mask
actions, :mod:`jaxarc.solve.mixed_replay`). Each action has a **kind** shared by every task
(:func:`action_kinds`), so what is learned over kinds carries from task to task.

Static and traced: a task is learned on the smallest canvas of
:data:`~jaxarc.solve.canvas.CANVAS_SIDES` that holds its grids, with its demonstrations
padded to a count of :data:`DEMO_SLOTS` and its vocabulary to :data:`VOCABULARY_SLOTS`
rows; those sizes are static (one compiled program per bucket, and one per bucket of mask
actions an item plays), the task's grids and vocabulary are traced.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.grid import operation_ids as ops
from jaxarc.solve.candidates import candidate_actions
from jaxarc.solve.canvas import bucket, canvas_side
from jaxarc.solve.language.vocabulary import (
    LANGUAGE_KINDS,
    MAX_ITEMS,
    LanguageVocabulary,
    language_vocabulary,
)
from jaxarc.solve.problem import Problem
from jaxarc.solve.search import pad_slots
from jaxarc.solve.tiling import tile_layout_actions

DEMO_SLOTS = (4, 6, 10)  # demonstration pairs, padded up to one of these
VOCABULARY_SLOTS = (64, 128, 256)  # vocabulary rows, padded up to one of these
NOOP = (-1, 0, 0, 0, 0)  # the environment's no-op (an unknown operation)


def program_vocabulary(problem: Problem) -> Int32[np.ndarray, "C N 5"]:
    """The actions a program of ``problem`` is made of, one row ``(operation, r1, c1, r2,
    c2)`` per grid (demonstration inputs, then test inputs): the no-op first, then the
    search's candidates, then the tile-layout actions; duplicates removed."""
    grids = problem.num_demos + problem.num_tests
    noop = np.tile(np.asarray(NOOP, np.int32), (1, grids, 1))
    table = np.concatenate([noop, candidate_actions(problem), tile_layout_actions(problem)])
    _, first = np.unique(table.reshape(len(table), -1), axis=0, return_index=True)
    return table[np.sort(first)]


def task_language(problem: Problem) -> LanguageVocabulary:
    """``problem`` 's language items, as many as fit :data:`VOCABULARY_SLOTS` next to its
    whole-grid actions (every view first, then the best paints)."""
    room = VOCABULARY_SLOTS[-1] - len(program_vocabulary(problem))
    return language_vocabulary(problem, max(min(room, MAX_ITEMS), 0))


BOX_CLASSES = 5  # an action's box, for its kind: no-op, whole grid, (0, 0), another cell, a box


def action_kinds(table: Int32[np.ndarray, "C N 5"]) -> Int32[np.ndarray, " C"]:
    """The kind of each vocabulary action, shared by every task: its operation and the class
    of its box as the first grid has it (no-op, the whole grid, the cell (0, 0), another
    cell, any other box), ``(operation + 1) * BOX_CLASSES + class``. A prior over
    kinds (:mod:`jaxarc.solve.program_prior`) carries from task to task what a vocabulary
    of concrete coordinates cannot."""
    first = table[:, 0]
    op, r1, c1, r2, c2 = (first[:, k] for k in range(5))
    whole = (r1 == 0) & (c1 == 0) & (r2 == 29) & (c2 == 29)
    cell = (r1 == r2) & (c1 == c2)
    origin = cell & (r1 == 0) & (c1 == 0)
    box_class = np.select([op < 0, whole, origin, cell], [0, 1, 2, 3], 4)
    return ((op + 1) * BOX_CLASSES + box_class).astype(np.int32)


NUM_KINDS = (ops.NUM_OPERATIONS + 1) * BOX_CLASSES  # the whole-grid actions' kinds
ALL_KINDS = NUM_KINDS + LANGUAGE_KINDS  # then the content language's items' kinds


def full_prior(prior: Float32[np.ndarray, "K K"]) -> Float32[np.ndarray, "A A"]:
    """``prior`` over the whole-grid actions' kinds widened to :data:`ALL_KINDS`: the
    language items' kinds (and every pair with one) start at 0."""
    prior = np.asarray(prior, np.float32)
    full = np.zeros((ALL_KINDS, ALL_KINDS), np.float32)
    full[: prior.shape[0], : prior.shape[1]] = prior
    return full


class TaskArrays(eqx.Module):
    """One task as its learning plays it, padded to static sizes: the vocabulary's rows per
    demonstration ``[C, D, 5]`` (unused rows are no-ops), which rows are real, their kinds,
    the demonstration inputs, shapes and outputs (``-1`` outside a grid), which of the
    ``D`` slots hold a demonstration, and each row's mask actions after its bbox action,
    operations ``[C, D, K]`` (``-1``: none) and masks ``[C, D, K, S, S]`` (``K = 0``
    without the content language; see :mod:`jaxarc.solve.mixed_replay`), and each row's
    parent ``[C]``: the row of the view a language paint is drawn on (``0``: none)."""

    table: Int32[Array, "C D 5"]
    valid: Bool[Array, " C"]
    kinds: Int32[Array, " C"]
    inputs: Int8[Array, "D H W"]
    shapes: Int32[Array, "D 2"]
    targets: Int8[Array, "D H W"]
    demo: Bool[Array, " D"]
    mask_ops: Int32[Array, "C D K"]
    masks: Bool[Array, "C D K H W"]
    parents: Int32[Array, " C"]


def task_arrays(
    problem: Problem, language: LanguageVocabulary | None = None
) -> tuple[TaskArrays, Int32[np.ndarray, "C N 5"], int]:
    """``problem`` as its learning plays it: ``(the padded arrays, the vocabulary, the
    canvas side)``. With ``language`` (the task's
    :func:`~jaxarc.solve.language.vocabulary.language_vocabulary`), its items follow the
    whole-grid actions as rows whose bbox action is the no-op (their kinds after
    :data:`NUM_KINDS`); together at most :data:`VOCABULARY_SLOTS` rows
    (:func:`task_language` makes them fit)."""
    table = program_vocabulary(problem)
    whole_grid = len(table)
    if language is not None and whole_grid + len(language) > VOCABULARY_SLOTS[-1]:
        raise ValueError(
            f"task {problem.task_id}: {whole_grid} whole-grid actions and {len(language)} "
            f"language items; at most {VOCABULARY_SLOTS[-1]} in all (see task_language)"
        )
    items = 0 if language is None else len(language)
    if items:
        noop = np.tile(np.asarray(NOOP, np.int32), (items, table.shape[1], 1))
        table = np.concatenate([table, noop])
    demos = problem.num_demos
    slots = bucket(demos, DEMO_SLOTS)
    rows = bucket(len(table), VOCABULARY_SLOTS)
    resized = table[table[..., 0] == ops.RESIZE][:, 3:] + 1  # the largest grid a RESIZE makes
    grids = (*problem.demo_inputs, *problem.demo_outputs)
    largest = max(max(max(g.shape) for g in grids), int(resized.max(initial=1)))
    side = canvas_side(largest)
    demo_table = np.zeros((rows, slots, 5), np.int32)
    demo_table[..., 0] = -1
    demo_table[: len(table), :demos] = table[:, :demos]
    demo_table[: len(table), demos:] = table[:, :1]  # unused slots play the first grid's
    kinds = np.zeros(rows, np.int32)
    kinds[: len(table)] = action_kinds(table)
    inputs, shapes = pad_slots(problem.demo_inputs, slots, side)
    targets, _ = pad_slots(problem.demo_outputs, slots, side)
    demo = np.arange(slots) < demos
    targets[~demo] = -1
    width = language.operations.shape[-1] if items else 0
    mask_ops = np.full((rows, slots, width), -1, np.int32)
    masks = np.zeros((rows, slots, width, side, side), bool)
    parents = np.zeros(rows, np.int32)
    if items:
        assert language is not None  # (for the type checker: items > 0)
        kinds[whole_grid : whole_grid + items] = NUM_KINDS + language.kinds
        item_rows = slice(whole_grid, whole_grid + items)
        mask_ops[item_rows, :demos] = language.operations[:, :demos]
        masks[item_rows, :demos] = language.masks[:, :demos, :, :side, :side]
        parents[item_rows] = np.where(language.parents >= 0, whole_grid + language.parents, 0)
    arrays = TaskArrays(
        *(jnp.asarray(x) for x in (demo_table, np.arange(rows) < len(table), kinds)),
        *(jnp.asarray(x) for x in (inputs, shapes, targets, demo, mask_ops, masks, parents)),
    )
    return arrays, table, side


StartLogits = Callable[[TaskArrays, int], Float32[Array, "C C"]]
"""A task's starting chain logits from its padded arrays and canvas side (a program
network's, :func:`jaxarc.solve.program_network.network_start`)."""
