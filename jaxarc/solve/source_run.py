"""One solve of a task source, from settings to the submission and its report.

:func:`solve_source` builds the method a :class:`~jaxarc.solve.method_choice.MethodChoice`
names, loads the source, solves this process's share of its tasks
(:mod:`jaxarc.solve.sharing`) and, on process 0, assembles the submission and the report:
one entry per task, scored where the source knows its test outputs (pass@2 by task), with
the tasks a program prior saw left out of the score. :func:`write_outcome` writes both
files or neither; :func:`summary_line` says what was solved in one line.

Every failure the user can mend is a :class:`SolveRunError` with what and where.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from jaxarc.agents.run.task_progress import TaskProgress, percent
from jaxarc.solve.method import MethodError, SolveMethod
from jaxarc.solve.method_choice import MethodChoice, build_method
from jaxarc.solve.problem import Problem

SEEN_IDS_LISTED = 10  # ids named in the line on the tasks a prior saw


class SolveRunError(ValueError):
    """A run that cannot go on (a bad source, method setting or process), in one line."""


class CompileTimer(Protocol):
    """What the run reads of the clock timing JAX's program making around it
    (:class:`jaxarc.benchmarking.compile_clock.CompileClock`)."""

    @property
    def seconds(self) -> float: ...

    def speed(self, seconds: float, tasks: int) -> dict[str, Any]: ...


@dataclasses.dataclass(frozen=True)
class SolveRequest:
    """What to solve: ``source`` (a bank name, a directory or a Kaggle challenges file),
    ``solutions`` (a Kaggle solutions file, for scoring), ``limit`` (the first N tasks)."""

    source: str
    solutions: Path | None = None
    limit: int | None = None


@dataclasses.dataclass(frozen=True)
class SolveOutcome:
    """The submission ``{task_id: [{attempt_1, attempt_2}, ...]}`` and its report."""

    submission: dict[str, list[dict[str, Any]]]
    report: dict[str, Any]


def solve_source(
    choice: MethodChoice,
    request: SolveRequest,
    clock: CompileTimer,
    *,
    primary: bool = True,
    say: Callable[[str], None] = print,
) -> SolveOutcome | None:
    """Solve ``request``'s tasks with the method ``choice`` names. ``clock`` times JAX's
    program making while it runs (entered by the caller); ``primary``: this process draws
    the progress bar and speaks (``say``). Returns ``None`` on a process other than 0 of a
    run of several (process 0 writes)."""
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.attempts import solved_by_solutions
    from jaxarc.solve.problem import ProblemError, known_test_outputs, problems_from_bank
    from jaxarc.solve.sharing import ShareError, TaskSharing, solve_share
    from jaxarc.solve.submission import entries, score_submission, validate_submission

    start = time.perf_counter()
    try:
        method = build_method(choice)
    except MethodError as err:
        raise SolveRunError(str(err)) from None
    try:
        bank = load_bank(request.source, solutions=request.solutions)
    except ValueError as err:
        raise SolveRunError(f"cannot load {request.source}: {err}") from None
    if request.limit is not None:
        bank = bank.subset(range(min(request.limit, bank.num_tasks)))
    try:
        problems = problems_from_bank(bank)
        seen = _seen_by_prior(method, problems, request.source, say if primary else None)
        sharing = TaskSharing.of_this_process(problems)
    except (ProblemError, MethodError, ShareError) as err:
        raise SolveRunError(str(err)) from None
    label = f"{request.source}: {method.describe()}"
    if sharing.count > 1:
        mine = len(sharing.share.problems)
        label += f" (process 0 of {sharing.count}: {mine} of {len(problems)} tasks)"
    progress = TaskProgress(label, enabled=primary)
    plan = {"method": method.name, "budget": choice.describe_budget(), "seed": choice.seed}
    try:
        gathered = solve_share(method, sharing, {**plan, **method.settings()}, progress)
    except (MethodError, ShareError) as err:
        raise SolveRunError(str(err)) from None
    finally:
        progress.close()
    if gathered is None:  # (this process's share is with process 0, which writes)
        return None
    attempts, records = gathered
    submission = {p.task_id: entries(attempts[p.task_id]) for p in problems}
    validate_submission(submission, {p.task_id: p.num_tests for p in problems})
    seconds = time.perf_counter() - start
    score = score_submission(submission, known_test_outputs(bank), leave_out=seen or ())
    by_solutions = solved_by_solutions(score["tasks"], records)
    report = {
        "source": request.source,
        "method": method.name,
        "experimental": method.experimental,
        **{k: v for k, v in plan.items() if k != "method"},
        "num_tasks": len(problems),
        "processes": sharing.count,
        "wall_seconds": round(seconds, 1),
        **_speed(clock, method, seconds, len(problems) - method.tasks_done_before()),
        **method.settings(),
        **({} if seen is None else {"seen_by_prior": seen}),
        **{k: v for k, v in score.items() if k != "tasks"},
        # solved by an attempt from a program that solves every demonstration (the rest: luck)
        "solved_tasks_by_solutions": len(by_solutions),
        "tasks": {
            task_id: {**records.get(task_id, {}), **score["tasks"].get(task_id, {})}
            for task_id in submission
        },
    }
    return SolveOutcome(submission, report)


def _seen_by_prior(
    method: SolveMethod,
    problems: list[Problem],
    source: str,
    say: Callable[[str], None] | None,
) -> list[str] | None:
    """program-rl: the ids of the tasks its prior was pretrained on (by content), named in
    one line when there are any; ``None`` for other methods or a prior that records no task
    hashes (one line says so)."""
    seen_by = getattr(method, "tasks_seen_by_prior", None)
    if seen_by is None:
        return None
    seen = seen_by(problems)
    if say is not None and seen is None:
        say(f"the prior records no task hashes: which tasks of {source} it saw is unknown")
    elif say is not None and seen:
        named = ", ".join(seen[:SEEN_IDS_LISTED]) + (", ..." if len(seen) > SEEN_IDS_LISTED else "")
        say(
            f"prior saw {len(seen)} of {len(problems)} tasks of {source} (left out of the "
            f"score): {named}"
        )
    return seen


def _speed(
    clock: CompileTimer, method: SolveMethod, seconds: float, learned_tasks: int
) -> dict[str, Any]:
    """The run's speed with making programs apart; with the steps the method counts,
    ``<unit>_per_second`` (e.g. ``program_steps_per_second``: program steps played per
    demonstration pair, a second)."""
    speed = clock.speed(seconds, learned_tasks)
    per_task = method.steps_per_task()
    if per_task and learned_tasks:
        running = max(seconds - clock.seconds, 1e-9)
        speed[f"{method.step_unit}_per_second"] = round(per_task * learned_tasks / running)
    return speed


def write_outcome(out: Path, report_path: Path, outcome: SolveOutcome) -> None:
    """The submission at ``out`` and the report at ``report_path``: both or neither, each
    atomically; a write that still fails is a :class:`SolveRunError` naming the file."""
    from jaxarc.solve.submission import write_json_atomic

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out, outcome.submission)
        try:
            write_json_atomic(report_path, outcome.report)
        except BaseException:
            out.unlink(missing_ok=True)
            raise
    except OSError as err:
        raise SolveRunError(f"cannot write {err.filename or out}: {err.strerror or err}") from None


def summary_line(report: dict[str, Any]) -> str:
    """One line: what was solved, or that nothing could be scored."""
    what = f"{report['source']}: {report['num_tasks']} tasks, {report['method']}"
    if report.get("depth") is not None:
        what += f" depth {report['depth']}"
    what += f" (budget {report['budget']}), {report['wall_seconds']} s"
    if "compile_seconds" in report:
        what += f" ({report['compile_seconds']} s making programs)"
    seen = report.get("seen_by_prior")
    if seen:
        what += f"; {len(seen)} seen by the prior left out"
    if not report["scored_tasks"]:
        unknown = "no unseen task with known test outputs" if seen else "no test outputs known"
        return f"{what}; {unknown}: not scored"
    return (
        f"{what}; solved {report['solved_tasks']} of {report['scored_tasks']} tasks "
        f"(pass@2 by task: {percent(report['solve_rate'])}; "
        f"{report.get('solved_tasks_by_solutions', 0)} by programs that solve every "
        f"demonstration); test inputs {report['solved_pairs']} of {report['scored_pairs']}"
    )
