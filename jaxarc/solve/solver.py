"""Every task of a source to two attempts per test input: the methods behind ``jaxarc solve``.

* ``search``: :func:`jaxarc.solve.search.search` to ``depth`` actions, then the task's
  tiling program when it has one (:mod:`jaxarc.solve.tiling`, any length); the first two
  solutions with different test grids are the attempts. Fewer than two solutions: the next
  attempt is the sequence that came closest on the demonstrations, then the test input
  itself.
* ``random``: two sequences of ``depth`` actions drawn uniformly from the task's candidate
  set (the search's action space without the search), replayed by the environment.
* ``policy``: a trained policy, frozen (:mod:`jaxarc.solve.policy_attempts`).

Every method sees the tasks as :class:`~jaxarc.solve.problem.Problem` s (no test output);
every predicted grid of ``search`` and ``random`` comes from
:func:`~jaxarc.solve.replay.replay_on_task`, the environment's own replay.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operation_ids import OPERATION_NAMES
from jaxarc.solve.candidates import candidate_actions, crop_boxes
from jaxarc.solve.problem import Problem
from jaxarc.solve.replay import MAX_STEPS, replay_on_task
from jaxarc.solve.search import search
from jaxarc.solve.tiling import describe_tiling, find_tiling, tiling_program

METHODS = ("search", "random", "policy")
MAX_DEPTH = 4


class BudgetError(ValueError):
    """A budget that cannot be used (with the reason)."""


@dataclasses.dataclass(frozen=True)
class Budget:
    """What a task may use: ``seconds`` of search, or ``steps`` (search: action sequences
    tried; policy: environment steps per attempt). ``None``: no limit (the method's own)."""

    seconds: float | None = None
    steps: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> Budget:
        """``"30s"`` (seconds per task), ``"5000"`` (steps per task) or ``None``."""
        if text is None:
            return cls()
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(s?)\s*", text)
        if match is None:
            raise BudgetError(f"budget {text!r}: give seconds ('30s') or steps ('5000')")
        value = float(match.group(1))
        if value <= 0:
            raise BudgetError(f"budget {text!r}: must be more than 0")
        if match.group(2):
            return cls(seconds=value)
        if value != int(value):
            raise BudgetError(f"budget {text!r}: steps are a whole number")
        return cls(steps=int(value))

    def describe(self) -> str:
        if self.seconds is not None:
            return f"{self.seconds:g} s per task"
        if self.steps is not None:
            return f"{self.steps} steps per task"
        return "none"


def describe_sequence(sequence: np.ndarray, problem: Problem | None = None) -> list[str]:
    """``["COPY(largest object)", "PASTE(0,0,0,0)", ...]``: a sequence of bbox actions in
    words. A step is ``[5]`` (one action for every grid) or ``[N, 5]`` (one per grid); a
    step whose boxes differ between grids is named by its crop selector (found again from
    ``problem``), else ``per grid``."""
    steps = np.asarray(sequence, np.int32)
    steps = steps.reshape(-1, 1, 5) if steps.ndim < 3 else steps
    named: dict[tuple, str] = {}
    if problem is not None:
        for name, boxes in crop_boxes(problem):
            named[(ops.COPY, *boxes)] = f"COPY({name})"
            shapes = [(0, 0, r2 - r1, c2 - c1) for r1, c1, r2, c2 in boxes]
            named[(ops.RESIZE, *shapes)] = f"RESIZE(shape of {name})"
    words = []
    for step in steps:
        op = int(step[0, 0])
        if (step == step[:1]).all():
            words.append(f"{OPERATION_NAMES[op]}({','.join(str(int(v)) for v in step[0, 1:])})")
            continue
        key = (op, *(tuple(int(v) for v in row[1:]) for row in step))
        words.append(named.get(key, f"{OPERATION_NAMES[op]}(per grid)"))
    return words


def first_two_distinct(options: list[list[np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per test input, the attempts of the first two options (whole-task predictions) that
    differ; the first twice when all agree."""
    first = options[0]

    def differs(other: list[np.ndarray]) -> bool:
        return any(not np.array_equal(a, b) for a, b in zip(first, other, strict=True))

    second = next((o for o in options[1:] if differs(o)), first)
    return list(zip(first, second, strict=True))


def search_attempts(
    problem: Problem, depth: int, budget: Budget
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
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
    _, partial = replay_on_task(problem, result.best_partial)
    options += [partial, list(problem.test_inputs)]
    info = {
        "solutions": verified,
        "best_partial": describe_sequence(result.best_partial, problem),
        "candidates": result.candidates,
        "sequences": result.sequences,
        "nodes": result.nodes,
        "complete": result.complete,
        "seconds": round(result.seconds, 3),
    }
    return first_two_distinct(options), info


def random_attempts(
    problem: Problem, depth: int, rng: np.random.Generator
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """Two attempts per test input from random sequences of ``depth`` candidate actions."""
    candidates = candidate_actions(problem)
    sequences = [candidates[rng.integers(0, len(candidates), depth)] for _ in range(2)]
    options = [replay_on_task(problem, s)[1] for s in sequences]
    attempts = [(a, b) for a, b in zip(options[0], options[1], strict=True)]
    return attempts, {"sequences": [describe_sequence(s, problem) for s in sequences]}


def solve_problems(
    problems: list[Problem],
    method: str,
    *,
    depth: int = 2,
    budget: Budget = Budget(),
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, list[tuple[np.ndarray, np.ndarray]]], dict[str, dict[str, Any]]]:
    """``(attempts by task id, what the method did by task id)`` for ``search`` or
    ``random`` (the policy method is :func:`jaxarc.solve.policy_attempts.policy_attempts`)."""
    if method not in ("search", "random"):
        raise ValueError(f"unknown method {method!r}; here: search, random")
    if not 1 <= depth <= min(MAX_DEPTH, MAX_STEPS):
        raise ValueError(f"depth {depth}: use 1 to {MAX_DEPTH}")
    rng = np.random.default_rng(seed)
    attempts, infos = {}, {}
    for k, problem in enumerate(problems):
        if progress is not None:
            progress(k, len(problems))
        if method == "search":
            attempts[problem.task_id], infos[problem.task_id] = search_attempts(
                problem, depth, budget
            )
        else:
            attempts[problem.task_id], infos[problem.task_id] = random_attempts(problem, depth, rng)
    if progress is not None:
        progress(len(problems), len(problems))
    return attempts, infos
