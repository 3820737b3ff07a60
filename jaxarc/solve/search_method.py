"""The search methods of ``jaxarc solve``.

* ``search`` (:class:`SearchMethod`): :func:`jaxarc.solve.search.search` to ``depth``
  actions, then the task's tiling program when it has one (:mod:`jaxarc.solve.tiling`, any
  length), then the programs of the content language that solve every demonstration
  (:mod:`jaxarc.solve.language`, simplest first); the first two solutions with different
  test grids are the attempts. Fewer than two solutions: the next attempt is the sequence
  that came closest on the demonstrations, then the test input itself.
* ``random`` (:class:`RandomMethod`, experimental: a baseline): two sequences of ``depth``
  actions drawn uniformly from the task's candidate set (the search's action space without
  the search).

Every predicted grid comes from :func:`~jaxarc.solve.replay.replay_on_task`, the
environment's own replay on the 30x30 canvas.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxarc.solve.attempts import TaskAttempts, describe_sequence, pick_attempts
from jaxarc.solve.candidates import candidate_actions
from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.method import Budget, MethodError, SolveMethod
from jaxarc.solve.problem import Problem
from jaxarc.solve.replay import MAX_STEPS, replay_on_task
from jaxarc.solve.search import search
from jaxarc.solve.tiling import describe_tiling, find_tiling, tiling_program

MAX_DEPTH = 4
NO_BUDGET = Budget()


def _check_depth(depth: int) -> None:
    if not 1 <= depth <= min(MAX_DEPTH, MAX_STEPS):
        raise MethodError(f"--depth {depth}: use 1 to {MAX_DEPTH}")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """``depth``: actions per sequence; ``budget``: per task, ``seconds`` of search or
    ``steps`` (action sequences tried); none: the whole depth."""

    depth: int = 2
    budget: Budget = NO_BUDGET

    def __post_init__(self) -> None:
        _check_depth(self.depth)


@dataclasses.dataclass(frozen=True)
class RandomConfig:
    """``depth``: actions per sequence; ``seed``: task ``k`` draws from ``(seed, k)``."""

    depth: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        _check_depth(self.depth)


def search_attempts(
    problem: Problem, depth: int, budget: Budget = NO_BUDGET
) -> tuple[TaskAttempts, dict[str, Any]]:
    """Two attempts per test input of ``problem`` from the search, and what it did."""
    result = search(problem, depth, seconds=budget.seconds, max_sequences=budget.steps)
    verified, options = [], []
    for sequence in result.solutions:
        solves, predictions = replay_on_task(problem, sequence)
        if solves:
            verified.append(describe_sequence(sequence, problem))
            options.append(predictions)
    tiling = find_tiling(problem)
    if tiling is not None:
        solves, predictions = replay_on_task(problem, tiling_program(tiling))
        if solves:
            verified.append(describe_tiling(tiling))
            options.append(predictions)
    for solution in language_solutions(problem):
        if any(_same_grids(solution.predictions, other) for other in options):
            continue  # the same test grids as a shorter solution's
        verified.append(solution.program.describe())
        options.append(solution.predictions)
    _, partial = replay_on_task(problem, result.best_partial)
    solving = [True] * len(options)
    options += [partial, list(problem.test_inputs)]
    attempts, from_solutions = pick_attempts(options, solving + [False, False])
    info = {
        "solutions": verified,
        "best_partial": describe_sequence(result.best_partial, problem),
        "candidates": result.candidates,
        "sequences": result.sequences,
        "nodes": result.nodes,
        "complete": result.complete,
        "seconds": round(result.seconds, 3),
        "attempts_from_solutions": from_solutions,
    }
    return attempts, info


def _same_grids(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def random_attempts(
    problem: Problem, depth: int, rng: np.random.Generator
) -> tuple[TaskAttempts, dict[str, Any]]:
    """Two attempts per test input from random sequences of ``depth`` candidate actions."""
    candidates = candidate_actions(problem)
    sequences = [candidates[rng.integers(0, len(candidates), depth)] for _ in range(2)]
    options = [replay_on_task(problem, s)[1] for s in sequences]
    attempts = [(a, b) for a, b in zip(options[0], options[1], strict=True)]
    return attempts, {"sequences": [describe_sequence(s, problem) for s in sequences]}


class SearchMethod(SolveMethod):
    """``search``: see the module docstring."""

    name = "search"

    def __init__(self, config: SearchConfig) -> None:
        self.config = config

    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        return search_attempts(problem, self.config.depth, self.config.budget)

    def settings(self) -> dict[str, Any]:
        return {"depth": self.config.depth}

    def describe(self) -> str:
        return (
            f"search depth {self.config.depth} (the first task of each canvas size and grid "
            "count compiles a program)"
        )


class RandomMethod(SolveMethod):
    """``random`` (experimental): see the module docstring."""

    name = "random"
    experimental = True

    def __init__(self, config: RandomConfig) -> None:
        self.config = config

    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        rng = np.random.default_rng([self.config.seed, index])
        return random_attempts(problem, self.config.depth, rng)

    def settings(self) -> dict[str, Any]:
        return {"depth": self.config.depth}

    def describe(self) -> str:
        return f"random depth {self.config.depth}"
