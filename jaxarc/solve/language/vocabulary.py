"""The content language as a vocabulary: items a program learner picks from, each the
environment's own mask actions on every grid of a task.

The search (:func:`~jaxarc.solve.language.finder.language_solutions`) and the program
learner (:mod:`jaxarc.solve.program_rl`, with ``LearnerVariant(language=True)``) draw from
one language: the search covers a task's wrong cells with safe paints
(:func:`~jaxarc.solve.language.paint.find_cover`) on each view that fits the task; the
learner is offered the same views and safe paints one by one and learns from reward which
to play, and in what order, next to its whole-grid actions.

Items come in two sorts:

* a **view item**: a view of :func:`~jaxarc.solve.language.views.task_views` other than the
  input itself, played as ``RESIZE`` to the view's canvas and one ``FILL_c`` per colour it
  holds (:func:`~jaxarc.solve.language.program.grid_actions`), so that the grid becomes
  the view's canvas;
* a **paint item**: a safe paint of one view (the ``input`` view when the outputs have
  their inputs' shapes) that :meth:`~jaxarc.solve.language.paint.CoverTables.safe_paints`
  offers (fill, self, copy or the colour map), the ``FILL_c`` actions of what it writes on
  that view's canvas. A paint of another view than the input has that view's item as its
  **parent**: it fixes cells only once the view is laid.

The view items come first (in the order of ``task_views``), then the paints, taken in
rounds: each view's best remaining paint in turn (the input's first), a view's paints ranked
by how many wrong cells of the demonstrations they fix (ties in the order the cover tables
offer them: general rules first), at most ``max_items`` items in all. On each grid
(demonstration inputs, then test inputs) an item is at most :data:`ITEM_ACTIONS` mask
actions, padded with the no-op ``-1``.

Each item has a **kind** shared by every task (:func:`item_kinds`): a paint's kind and its
rule's mask family, or a view's kind (:data:`VIEW_ITEM_KINDS`), counted after the
whole-grid actions' kinds, so what is learned over kinds carries from task to task.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxtyping import Bool, Int32

from jaxarc.solve.language.colours import grid_colours
from jaxarc.solve.language.masks import FAMILY_NAMES, family_masks
from jaxarc.solve.language.objects import background
from jaxarc.solve.language.paint import CoverTables, Paint, one_blas_thread, view_masks
from jaxarc.solve.language.program import LanguageProgram, grid_actions
from jaxarc.solve.language.view import View
from jaxarc.solve.language.view_kinds import VIEW_KINDS
from jaxarc.solve.language.views import task_views
from jaxarc.solve.problem import MAX_SIDE, Problem

MAX_ITEMS = 176  # items per task (with at most 80 whole-grid actions, 256 rows in all)
ITEM_ACTIONS = 11  # mask actions an item plays on one grid (a view: RESIZE and 10 colours)
ACTION_BUCKETS = (1, 2, 4, ITEM_ACTIONS)  # a task's items are padded to one of these
PAINT_KINDS = ("fill", "self", "self fg", "copy", "map")
MASK_CLASSES = len(FAMILY_NAMES) + 1  # each family, then a view's own masks and the map
VIEW_ITEM_KINDS = (*(k for k in VIEW_KINDS if k != "input"), "other view")
PAINT_ITEM_KINDS = len(PAINT_KINDS) * MASK_CLASSES
LANGUAGE_KINDS = PAINT_ITEM_KINDS + len(VIEW_ITEM_KINDS)


@dataclasses.dataclass(frozen=True)
class LanguageVocabulary:
    """A task's language items: the ``view`` each belongs to and its ``paint`` (``None``
    for a view item), per item and grid the mask actions' ``operations [L, N, K]`` (``-1``:
    no action) and ``masks [L, N, K, 30, 30]``, the items' ``kinds [L]`` (from 0, see
    :func:`item_kinds`) and ``parents [L]`` (the item of a paint's view, ``-1``: none).
    ``N``: demonstration inputs, then test inputs; ``K``: a bucket of
    :data:`ACTION_BUCKETS`."""

    views: tuple[str, ...]
    paints: tuple[Paint | None, ...]
    operations: Int32[np.ndarray, "L N K"]
    masks: Bool[np.ndarray, "L N K 30 30"]
    kinds: Int32[np.ndarray, " L"]
    parents: Int32[np.ndarray, " L"]

    def __len__(self) -> int:
        return len(self.paints)

    def describe(self, item: int) -> str:
        paint = self.paints[item]
        return f"VIEW({self.views[item]})" if paint is None else paint.describe()


def same_shape(problem: Problem) -> bool:
    """Whether every demonstration output has its input's shape."""
    return all(
        i.shape == o.shape for i, o in zip(problem.demo_inputs, problem.demo_outputs, strict=True)
    )


def view_paints(problem: Problem, column: list[View]) -> list[Paint]:
    """The safe paints of one view of ``problem`` (``column``: the view of each grid), the
    most wrong demonstration cells fixed first (a stable sort); ``[]`` when the view
    already is every output."""
    demos = problem.num_demos
    bg = column[0].background
    colours = [grid_colours(grid, bg) for grid in problem.demo_inputs]
    tables = CoverTables(column[:demos], list(problem.demo_outputs), colours)
    if not tables.wrong.any():
        return []
    paints, writes = tables.safe_paints(np.zeros_like(tables.wrong), tables.wrong)
    if not paints:
        return []
    gains = (writes & tables.wrong[None]).sum(1)
    return [paints[k] for k in np.argsort(-gains, kind="stable")]


def view_kind(name: str) -> int:
    """The index in :data:`VIEW_ITEM_KINDS` of the view called ``name``."""
    for kind, prefixes in VIEW_KINDS.items():
        if kind != "input" and name.startswith(prefixes):
            return VIEW_ITEM_KINDS.index(kind)
    return len(VIEW_ITEM_KINDS) - 1


def item_kinds(
    paints: list[Paint | None] | tuple[Paint | None, ...],
    problem: Problem,
    views: tuple[str, ...] | None = None,
) -> Int32[np.ndarray, " L"]:
    """Each item's kind. A paint: ``paint kind * MASK_CLASSES + mask class``, the paint
    kinds of :data:`PAINT_KINDS`; the mask class is the family (:data:`FAMILY_NAMES`) of
    its rule on the first demonstration input (a ``self`` template's rule of its first
    colour there), else the last class (a view's own mask, the colour map). A view item
    (``None`` in ``paints``, its name in ``views``): :data:`PAINT_ITEM_KINDS` plus its
    :func:`view_kind`."""
    bg = background(*problem.demo_inputs, *problem.test_inputs)
    by_family = family_masks(problem.demo_inputs[0], bg)
    family_of = {name: k for k, f in enumerate(FAMILY_NAMES) for name in by_family[f]}
    kinds = []
    for item, paint in enumerate(paints):
        if paint is None:
            assert views is not None  # (a view item is named in views)
            kinds.append(PAINT_ITEM_KINDS + view_kind(views[item]))
            continue
        names = [paint.mask.format(c=c) for c in range(10)] if "{c}" in paint.mask else []
        name = next((n for n in names if n in family_of), paint.mask)
        family = family_of.get(name, MASK_CLASSES - 1) if paint.kind != "map" else -1
        kinds.append(PAINT_KINDS.index(paint.kind) * MASK_CLASSES + family % MASK_CLASSES)
    return np.asarray(kinds, np.int32).reshape(-1)


def language_vocabulary(problem: Problem, max_items: int = MAX_ITEMS) -> LanguageVocabulary:
    """``problem`` 's language items (see the module docstring); a paint that needs more
    than :data:`ITEM_ACTIONS` actions on some grid is left out."""
    with one_blas_thread():
        fitting = task_views(problem)
        if not same_shape(problem):
            fitting.pop("input", None)
        names = [n for n in fitting if n != "input"][:max_items]
    grids = [*problem.demo_inputs, *problem.test_inputs]
    views: list[str] = []
    paints: list[Paint | None] = []
    parents: list[int] = []
    actions: list[list[list]] = []  # per item, per grid: [(operation, mask)]
    for name in names:
        column = fitting[name]
        program = LanguageProgram(name, ())
        per_grid = [grid_actions(program, v, g) for v, g in zip(column, grids, strict=True)]
        if max(len(o) for o, _ in per_grid) > ITEM_ACTIONS:
            continue
        views.append(name)
        paints.append(None)
        parents.append(-1)
        actions.append([list(zip(o, m, strict=True)) for o, m in per_grid])
    parent_of = {name: k for k, name in enumerate(views)}
    order = ["input", *views] if "input" in fitting else views
    with one_blas_thread():
        ranked = {name: view_paints(problem, fitting[name]) for name in order}
    masks_of: dict[str, list[dict]] = {}
    depth = 0
    while len(paints) < max_items and any(depth < len(ranked[n]) for n in order):
        for name in order:
            if depth >= len(ranked[name]) or len(paints) >= max_items:
                continue
            column = fitting[name]
            if name not in masks_of:
                masks_of[name] = [view_masks(v) for v in column]
            paint = ranked[name][depth]
            program = LanguageProgram("input", (paint,))  # the paint alone, no RESIZE
            per_grid = [
                grid_actions(program, v, g, m)
                for v, g, m in zip(column, grids, masks_of[name], strict=True)
            ]
            if max(len(o) for o, _ in per_grid) > ITEM_ACTIONS:
                continue
            views.append(name)
            paints.append(paint)
            parents.append(parent_of.get(name, -1))
            actions.append([list(zip(o, m, strict=True)) for o, m in per_grid])
        depth += 1
    longest = max((len(a) for item in actions for a in item), default=1)
    width = next(b for b in ACTION_BUCKETS if b >= max(longest, 1))
    operations = np.full((len(paints), len(grids), width), -1, np.int32)
    masks = np.zeros((len(paints), len(grids), width, MAX_SIDE, MAX_SIDE), bool)
    for item, per_grid in enumerate(actions):
        for grid, steps in enumerate(per_grid):
            for k, (operation, mask) in enumerate(steps):
                operations[item, grid, k] = operation
                masks[item, grid, k] = mask
    kinds = item_kinds(paints, problem, tuple(views))
    return LanguageVocabulary(
        tuple(views), tuple(paints), operations, masks, kinds, np.asarray(parents, np.int32)
    )
