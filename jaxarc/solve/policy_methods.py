"""The experimental methods of ``jaxarc solve`` that play a trained policy (a ``jaxarc train``
run): ``policy`` plays it frozen (:func:`jaxarc.solve.policy_attempts.policy_attempts`),
``test-time-rl`` first fine-tunes a copy on each task's demonstrations
(:mod:`jaxarc.solve.policy_finetune`). Both batch tasks, so each overrides
:meth:`~jaxarc.solve.method.SolveMethod.solve_all`; :meth:`solve` runs one task alone.

``test-time-rl`` keeps each task it finishes in a :class:`~jaxarc.solve.progress_log.ProgressLog`
(``resume_log``) until the submission is written: the same command after a stop resumes
from it, with the submission an uninterrupted run would have written. Both draw every task's
keys from one stream, so neither shares its tasks among processes (``shares_tasks``).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax

from jaxarc.agents.run.evaluate import EvaluationError, load_trained_policy
from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.method import MethodError, Progress, SolveMethod, whole_updates
from jaxarc.solve.policy_attempts import policy_attempts
from jaxarc.solve.policy_finetune import TestTimeConfig, attempts_after_test_time_rl
from jaxarc.solve.problem import Problem
from jaxarc.solve.progress_log import (
    ProgressLog,
    ProgressLogError,
    directory_digest,
    problems_digest,
)


def _load(checkpoint: Path):
    try:
        return load_trained_policy(checkpoint)
    except EvaluationError as err:
        raise MethodError(str(err)) from None


def _whole_run(name: str, problems: list[Problem], indices: Sequence[int] | None) -> None:
    """A :class:`MethodError` unless ``problems`` are the whole run (``indices`` 0, 1, ...):
    these methods draw every task's keys from one stream, so they do not share tasks."""
    if indices is not None and list(indices) != list(range(len(problems))):
        raise MethodError(
            f"--method {name} draws every task's random keys from one stream: it solves "
            "all the tasks in one process, not a share"
        )


@dataclasses.dataclass(frozen=True)
class FrozenPolicyConfig:
    """``checkpoint``: the run; ``max_episode_steps``: per attempt (``None``: the run's);
    ``batch_size``: episodes played together; ``seed``: the sampled attempts' key."""

    checkpoint: Path
    max_episode_steps: int | None = None
    batch_size: int = 32
    seed: int = 0


class FrozenPolicyMethod(SolveMethod):
    """``policy`` (experimental): a greedy and a sampled episode of the frozen policy."""

    name = "policy"
    experimental = True
    shares_tasks = False

    def __init__(self, config: FrozenPolicyConfig) -> None:
        self.config = config
        self.trained, self.policy, self.path = _load(config.checkpoint)
        self.steps = config.max_episode_steps or int(self.trained.max_episode_steps)

    def solve_all(self, problems: list[Problem], progress: Progress | None = None, indices=None):
        _whole_run(self.name, problems, indices)
        try:
            attempts = policy_attempts(
                self.policy,
                self.trained.env_config().action,
                problems,
                max_episode_steps=self.steps,
                batch_size=self.config.batch_size,
                key=jax.random.key(self.config.seed),
                progress=progress,
            )
        except EvaluationError as err:
            raise MethodError(str(err)) from None
        return attempts, {p.task_id: {} for p in problems}

    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        attempts, records = self.solve_all([problem])
        return attempts[problem.task_id], records[problem.task_id]

    def settings(self) -> dict[str, Any]:
        return {"checkpoint": str(self.path), "max_episode_steps": self.steps}

    def describe(self) -> str:
        return "policy (the first batch compiles the program)"


@dataclasses.dataclass(frozen=True)
class PolicyFinetuneConfig:
    """``checkpoint``: the run; ``budget_steps``: environment steps of learning per task
    (``None``: ``finetune.updates``); ``finetune``: how each task is learned;
    ``resume_log``: where finished tasks are kept until the submission is written
    (``None``: nowhere); ``seed``: the learning's key."""

    checkpoint: Path
    budget_steps: int | None = None
    finetune: TestTimeConfig = TestTimeConfig()
    resume_log: Path | None = None
    seed: int = 0


class PolicyFinetuneMethod(SolveMethod):
    """``test-time-rl`` (experimental): see the module docstring."""

    name = "test-time-rl"
    experimental = True
    shares_tasks = False
    step_unit = "env_steps"

    def __init__(self, config: PolicyFinetuneConfig) -> None:
        self.config = config
        self.trained, self.policy, self.path = _load(config.checkpoint)
        tt = config.finetune
        if config.budget_steps is not None:
            per_update = tt.env_steps_per_update(self.trained.max_episode_steps)
            what = (
                f"one test-time update takes {per_update} environment steps ({tt.batch_tasks} "
                f"groups x {tt.group_size} rollouts x {self.trained.max_episode_steps} steps)"
            )
            updates = whole_updates(config.budget_steps, per_update, what)
            tt = dataclasses.replace(tt, updates=updates)
        self.finetune = tt
        self.resumed = 0

    def _open_log(self, problems: list[Problem]):
        """``(log, finished tasks)``; ``(None, {})`` without a log or in a run of several
        processes (each would need the log; such a run does not resume)."""
        from jaxarc import __version__

        if self.config.resume_log is None or jax.process_count() > 1:
            return None, {}
        header = {
            "method": self.name,
            "tasks_sha256": problems_digest(problems)[:16],
            "checkpoint_sha256": directory_digest(self.path)[:16],
            "seed": self.config.seed,
            "test_time_updates": self.finetune.updates,
            "tasks_at_once": self.finetune.tasks_at_once,
            "jaxarc": __version__,
        }
        try:
            return ProgressLog.open(self.config.resume_log, header)
        except ProgressLogError as err:
            raise MethodError(str(err)) from None

    def solve_all(self, problems: list[Problem], progress: Progress | None = None, indices=None):
        _whole_run(self.name, problems, indices)
        log, finished = self._open_log(problems)
        if finished and getattr(progress, "enabled", True):
            print(
                f"resuming: {len(finished)} of {len(problems)} tasks were finished by a "
                f"stopped run of this command ({log.path})",
                file=sys.stderr,
            )
        learned: list[str] = []  # (the tasks this process learns; the others come from the log)

        def on_finished(chunk: dict, chunk_infos: dict) -> None:
            learned.extend(chunk)
            if log is not None:
                log.record(chunk, chunk_infos)

        try:
            attempts, infos = attempts_after_test_time_rl(
                self.policy,
                self.trained,
                problems,
                self.finetune,
                key=jax.random.key(self.config.seed),
                progress=progress,
                finished=finished,
                on_finished=on_finished,
            )
        except EvaluationError as err:
            raise MethodError(str(err)) from None
        self.resumed = len(problems) - len(learned)
        return attempts, infos

    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        attempts, records = self.solve_all([problem])
        return attempts[problem.task_id], records[problem.task_id]

    def settings(self) -> dict[str, Any]:
        return {
            "resumed_tasks": self.resumed,
            "checkpoint": str(self.path),
            "max_episode_steps": int(self.trained.max_episode_steps),
            "test_time_updates": self.finetune.updates,
            "env_steps_per_task": self.steps_per_task(),
            "tasks_at_once": self.finetune.tasks_at_once,
        }

    def steps_per_task(self) -> int:
        return self.finetune.env_steps_per_task(self.trained.max_episode_steps)

    def tasks_done_before(self) -> int:
        return self.resumed

    def describe(self) -> str:
        return "test-time RL (the first task of each bank of tasks compiles the update, ~1 min)"
