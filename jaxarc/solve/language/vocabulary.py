"""The content language as a vocabulary: items a program learner picks from, each the
environment's own mask actions on every grid of a task.

The search (:func:`~jaxarc.solve.language.finder.language_solutions`) and the program
learner (:mod:`jaxarc.solve.program_rl`, with ``LearnerVariant(language=True)``) draw from
one language: the search covers a task's wrong cells with safe paints
(:func:`~jaxarc.solve.language.paint.find_cover`); the learner is offered the same safe
paints one by one and learns from reward which to play, and in what order, next to its
whole-grid actions.

An **item** is one paint on the ``input`` view of a task whose outputs have their inputs'
shapes: a safe paint that :meth:`~jaxarc.solve.language.paint.CoverTables.safe_paints`
offers (fill, self, copy or the colour map), ranked by how many wrong cells of the
demonstrations it fixes (ties in the order the cover tables offer them: general rules
first), at most :data:`MAX_ITEMS`. On each grid (demonstration inputs, then test inputs)
an item is the ``FILL_c`` mask actions that
:func:`~jaxarc.solve.language.program.grid_actions` makes of it, at most
:data:`ITEM_ACTIONS`, padded with the no-op ``-1``.

Each item has a **kind** shared by every task, its paint kind and its rule's mask family
(:func:`item_kinds`), counted after the whole-grid actions' kinds, so a prior over kinds
carries from task to task which rules tend to be played.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxtyping import Bool, Int32

from jaxarc.solve.language.colours import grid_colours
from jaxarc.solve.language.masks import FAMILY_NAMES, family_masks
from jaxarc.solve.language.objects import background
from jaxarc.solve.language.paint import CoverTables, Paint, one_blas_thread
from jaxarc.solve.language.program import LanguageProgram, grid_actions
from jaxarc.solve.language.views import task_views
from jaxarc.solve.problem import MAX_SIDE, Problem

MAX_ITEMS = 64  # items per task, the paints fixing the most wrong cells first
ITEM_ACTIONS = 10  # mask actions an item plays on one grid (a paint writes at most 10 colours)
ACTION_BUCKETS = (1, 2, 4, ITEM_ACTIONS)  # a task's items are padded to one of these
PAINT_KINDS = ("fill", "self", "self fg", "copy", "map")
MASK_CLASSES = len(FAMILY_NAMES) + 1  # each family, then a view's own masks and the map
LANGUAGE_KINDS = len(PAINT_KINDS) * MASK_CLASSES


@dataclasses.dataclass(frozen=True)
class LanguageVocabulary:
    """A task's language items: ``paints [L]``, per item and grid the mask actions'
    ``operations [L, N, K]`` (``-1``: no action) and ``masks [L, N, K, 30, 30]``, and the
    items' ``kinds [L]`` (from 0, see :func:`item_kinds`). ``N``: demonstration inputs,
    then test inputs; ``K``: a bucket of :data:`ACTION_BUCKETS`."""

    paints: tuple[Paint, ...]
    operations: Int32[np.ndarray, "L N K"]
    masks: Bool[np.ndarray, "L N K 30 30"]
    kinds: Int32[np.ndarray, " L"]

    def __len__(self) -> int:
        return len(self.paints)

    def describe(self, item: int) -> str:
        return LanguageProgram("input", (self.paints[item],)).describe()[-1]


def same_shape(problem: Problem) -> bool:
    """Whether every demonstration output has its input's shape."""
    return all(
        i.shape == o.shape for i, o in zip(problem.demo_inputs, problem.demo_outputs, strict=True)
    )


def ranked_paints(problem: Problem, max_items: int = MAX_ITEMS) -> list[Paint]:
    """The safe paints of ``problem`` 's ``input`` view, the most wrong demonstration cells
    fixed first (a stable sort), at most ``max_items``; ``[]`` unless the outputs have
    their inputs' shapes or when every input already is its output."""
    if not same_shape(problem):
        return []
    column = task_views(problem)["input"]
    demos = problem.num_demos
    bg = background(*problem.demo_inputs, *problem.test_inputs)
    colours = [grid_colours(grid, bg) for grid in problem.demo_inputs]
    with one_blas_thread():
        tables = CoverTables(column[:demos], list(problem.demo_outputs), colours)
        if not tables.wrong.any():
            return []
        paints, writes = tables.safe_paints(np.zeros_like(tables.wrong), tables.wrong)
    if not paints:
        return []
    gains = (writes & tables.wrong[None]).sum(1)
    order = np.argsort(-gains, kind="stable")
    return [paints[k] for k in order[:max_items]]


def item_kinds(
    paints: list[Paint] | tuple[Paint, ...], problem: Problem
) -> Int32[np.ndarray, " L"]:
    """Each paint's kind, ``paint kind * MASK_CLASSES + mask class``: the paint kinds of
    :data:`PAINT_KINDS`; the mask class is the family (:data:`FAMILY_NAMES`) of its rule
    on the first demonstration input (a ``self`` template's rule of its first colour
    there), else the last class (a view's own mask, the colour map)."""
    bg = background(*problem.demo_inputs, *problem.test_inputs)
    by_family = family_masks(problem.demo_inputs[0], bg)
    family_of = {name: k for k, f in enumerate(FAMILY_NAMES) for name in by_family[f]}
    kinds = []
    for paint in paints:
        names = [paint.mask.format(c=c) for c in range(10)] if "{c}" in paint.mask else []
        name = next((n for n in names if n in family_of), paint.mask)
        family = family_of.get(name, MASK_CLASSES - 1) if paint.kind != "map" else -1
        kinds.append(PAINT_KINDS.index(paint.kind) * MASK_CLASSES + family % MASK_CLASSES)
    return np.asarray(kinds, np.int32).reshape(-1)


def language_vocabulary(problem: Problem, max_items: int = MAX_ITEMS) -> LanguageVocabulary:
    """``problem`` 's language items (see the module docstring); an item that needs more
    than :data:`ITEM_ACTIONS` actions on some grid is left out."""
    paints = ranked_paints(problem, max_items)
    column = task_views(problem)["input"] if paints else []
    grids = [*problem.demo_inputs, *problem.test_inputs]
    kept: list[Paint] = []
    per_item: list[list[tuple[np.ndarray, np.ndarray]]] = []
    for paint in paints:
        program = LanguageProgram("input", (paint,))
        actions = [grid_actions(program, v, g) for v, g in zip(column, grids, strict=True)]
        if max(len(o) for o, _ in actions) <= ITEM_ACTIONS:
            kept.append(paint)
            per_item.append(actions)
    longest = max((len(o) for actions in per_item for o, _ in actions), default=1)
    width = next(b for b in ACTION_BUCKETS if b >= max(longest, 1))
    operations = np.full((len(kept), len(grids), width), -1, np.int32)
    masks = np.zeros((len(kept), len(grids), width, MAX_SIDE, MAX_SIDE), bool)
    for item, actions in enumerate(per_item):
        for grid, (ops_, selections) in enumerate(actions):
            operations[item, grid, : len(ops_)] = ops_
            masks[item, grid, : len(ops_)] = selections
    return LanguageVocabulary(tuple(kept), operations, masks, item_kinds(kept, problem))
