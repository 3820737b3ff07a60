"""The language's solutions of one task: each fitting view, the cover of its paints, played
by the environment.

For every view that fits the task (output size first), :func:`find_cover` chooses the
paints; a program is kept when the environment, replaying it, turns every demonstration
input into its output (:func:`~jaxarc.solve.language.program.play_on_task`). Kept programs
are ranked by :attr:`~jaxarc.solve.language.program.LanguageProgram.rank` (programs from a
stamp view after all others: a learned pattern can describe a demonstration without
explaining it; then by size, the view and the paints it uses: fewer first, as the anchors
rank candidates by simplicity), then by the views' order; two
programs with the same test predictions are one.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxarc.solve.language.colours import grid_colours
from jaxarc.solve.language.masks import FAMILY_NAMES
from jaxarc.solve.language.objects import background
from jaxarc.solve.language.paint import CoverTables, find_cover, one_blas_thread
from jaxarc.solve.language.program import LanguageProgram, play_on_task
from jaxarc.solve.language.views import task_views
from jaxarc.solve.problem import Problem

MAX_PROGRAMS = 4  # programs kept per task (the attempts need two)
SUPPORT = 2  # demonstrations each paint of a first-ranked program fixes cells of


@dataclasses.dataclass(frozen=True)
class LanguageSolution:
    """A program that solves every demonstration and the grids it makes of the test
    inputs."""

    program: LanguageProgram
    predictions: list[np.ndarray]


def language_solutions(
    problem: Problem,
    max_programs: int = MAX_PROGRAMS,
    *,
    families: tuple[str, ...] = FAMILY_NAMES,
    views: tuple[str, ...] | None = None,
) -> list[LanguageSolution]:
    """Up to ``max_programs`` language programs that solve ``problem`` 's demonstrations,
    simplest first, with pairwise different test predictions; only the mask rules of
    ``families`` and the views named in ``views`` (kinds such as ``"crop"``, ``"parts"``:
    a view is used when its name starts with one; ``None``: every view) are used. BLAS runs
    on one thread meanwhile (:func:`~jaxarc.solve.language.paint.one_blas_thread`)."""
    with one_blas_thread():
        return _language_solutions(problem, max_programs, families, views)


def _language_solutions(
    problem: Problem,
    max_programs: int,
    families: tuple[str, ...],
    views: tuple[str, ...] | None,
) -> list[LanguageSolution]:
    fitting = task_views(problem)
    if views is not None:
        fitting = {n: v for n, v in fitting.items() if n.startswith(views)}
    demos = problem.num_demos
    grids = [*problem.demo_inputs, *problem.test_inputs]
    bg = background(*grids)
    colours = [grid_colours(grid, bg) for grid in grids]
    outputs = list(problem.demo_outputs)
    programs: list[tuple[bool, LanguageProgram, list]] = []
    support = min(SUPPORT, demos)
    for name, column in fitting.items():
        tables = CoverTables(column[:demos], outputs, colours[:demos], families)

        def cover(banned=(), min_support=1, tables=tables, column=column):
            return find_cover(
                column[:demos],
                outputs,
                colours[:demos],
                banned=banned,
                families=families,
                min_support=min_support,
                tables=tables,
            )

        first = cover(min_support=support)
        weak = first is None
        if weak:
            first = cover()
        if first is None:
            continue
        programs.append((weak, LanguageProgram(name, tuple(first)), column))
        if first:  # a second, different cover without the first's first paint
            other = cover(banned=(first[0],), min_support=1 if weak else support)
            if other is not None:
                programs.append((weak, LanguageProgram(name, tuple(other)), column))
    # every paint seen at work in two demonstrations first, then the simplest (stable:
    # the views' order on a tie)
    programs.sort(key=lambda item: (item[0], *item[1].rank))
    found: list[LanguageSolution] = []
    for _, program, column in programs:
        solves, predictions = play_on_task(problem, program, column)
        if not solves:
            continue
        if any(_same(predictions, other.predictions) for other in found):
            continue
        found.append(LanguageSolution(program, predictions))
        if len(found) == max_programs:
            break
    return found


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
