"""The one interface behind ``jaxarc solve``: a method takes a problem and gives its two
attempts per test input and a record of what it did.

Every method is a :class:`SolveMethod` built from its own typed config (a frozen dataclass);
building it reads and checks everything it needs (a prior, a checkpoint), so a bad setting
fails before the first task. :meth:`SolveMethod.solve_all` runs it over a list of problems
(one at a time by default; a method that batches tasks overrides it). The methods:

* ``search`` (:mod:`jaxarc.solve.search_method`, the default): breadth-first search over
  action sequences, tilings, then the programs of the content language
  (:mod:`jaxarc.solve.language`);
* ``program-rl`` (:mod:`jaxarc.solve.program_rl_method`): a program policy learned per task
  by GRPO, from a prior over programs shipped with the package;
* experimental, kept for comparison: ``random`` (:mod:`jaxarc.solve.search_method`),
  ``policy`` and ``test-time-rl`` (:mod:`jaxarc.solve.policy_methods`).
"""

from __future__ import annotations

import abc
import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.problem import Problem

Progress = Callable[[int, int], None]  # (tasks done, tasks in all)


class MethodError(ValueError):
    """A method that cannot be built from its settings (with what and where)."""


class BudgetError(ValueError):
    """A budget that cannot be used (with the reason)."""


@dataclasses.dataclass(frozen=True)
class Budget:
    """What a task may use: ``seconds`` (search) or ``steps`` (the method's own unit, see
    its config). ``None``: no limit (the method's default)."""

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


def whole_updates(steps: int, per_update: int, what: str) -> int:
    """The whole updates a budget of ``steps`` pays for; a :class:`MethodError` naming
    ``what`` one update costs when it pays for none."""
    if steps < per_update:
        raise MethodError(f"--budget {steps}: {what}; give at least that")
    return steps // per_update


class SolveMethod(abc.ABC):
    """A way to make two attempts per test input of a task from its demonstrations.

    ``name``: as ``--method`` gives it; ``experimental``: kept for comparison, not for use;
    ``step_unit``: what :meth:`steps_per_task` counts (e.g. ``"program_steps"``), ``None``
    where the method does not count steps; ``shares_tasks``: whether processes may each
    solve a share of the tasks (task ``k``'s attempts depend on ``k`` alone); ``config``:
    the method's frozen settings."""

    name: ClassVar[str]
    experimental: ClassVar[bool] = False
    shares_tasks: ClassVar[bool] = True
    step_unit: ClassVar[str | None] = None
    config: Any

    @abc.abstractmethod
    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        """``problem``'s attempts (per test input, two ``int8`` grids) and what the method
        did on it; ``index``: its place in the run (random keys derive from it)."""

    def solve_all(
        self,
        problems: list[Problem],
        progress: Progress | None = None,
        indices: Sequence[int] | None = None,
    ) -> tuple[dict[str, TaskAttempts], dict[str, dict[str, Any]]]:
        """``(attempts by task id, what the method did by task id)`` for every problem.
        ``indices``: each problem's place in the whole run (default ``0, 1, ...``; a process
        that solves a share of the tasks gives theirs, see :mod:`jaxarc.solve.sharing`)."""
        places = range(len(problems)) if indices is None else indices
        if len(places) != len(problems):
            raise ValueError(f"{len(problems)} problems but {len(places)} indices")
        attempts, records = {}, {}
        for done, (k, problem) in enumerate(zip(places, problems, strict=True)):
            if progress is not None:
                progress(done, len(problems))
            attempts[problem.task_id], records[problem.task_id] = self.solve(problem, k)
        if progress is not None:
            progress(len(problems), len(problems))
        return attempts, records

    def settings(self) -> dict[str, Any]:
        """What the run used, for its report (JSON types)."""
        return {self.name.replace("-", "_"): _jsonable(dataclasses.asdict(self.config))}

    def steps_per_task(self) -> int | None:
        """The steps (of :attr:`step_unit`) the method spends learning a task, or ``None``."""
        return None

    def tasks_done_before(self) -> int:
        """Tasks this run took from an earlier, stopped run (none by default)."""
        return 0

    def describe(self) -> str:
        """A few words for the progress line (e.g. what compiles when)."""
        return self.name


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
