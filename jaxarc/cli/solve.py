"""``jaxarc solve``: two attempts at every test input of a task source, written as an ARC
Prize submission (see ``docs/solve.md``).

This module only parses the flags, builds the method they name (a
:class:`~jaxarc.solve.method.SolveMethod`, see :mod:`jaxarc.solve.method`), runs it over the
tasks and writes. Every output path is checked before the first task. The submission is
written atomically after every task is solved and the result validated: on any error
nothing is written. Where the source knows its test outputs the run scores itself (pass@2
by task), and a report with one entry per task is written beside the submission (``<out>``
with ``.report.json``). With a program prior, the tasks it was pretrained on are named in
one line before the first task, solved and written, and left out of the score.

In a run of several processes (``--coordinator-address``, ``--num-processes``,
``--process-id``) each solves its share of the tasks (:mod:`jaxarc.solve.sharing`) and
process 0 gathers them and writes the one submission and report; the others write nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from jaxarc.cli.arg_types import positive_int
from jaxarc.cli.main import CLIError
from jaxarc.cli.output_paths import check_output_file
from jaxarc.cli.progress import TaskProgress
from jaxarc.cli.runtime import add_runtime_flags, prepare_runtime

DEFAULT_METHOD = "search"  # the best on the tuning split (ARC-AGI-1 training tasks 0-99)
METHODS = ("search", "program-rl", "random", "policy", "test-time-rl")  # (no jax import here)
EXPERIMENTAL = ("random", "policy", "test-time-rl")
CHECKPOINT_METHODS = ("policy", "test-time-rl")  # a trained network run
DEPTH_METHODS = ("search", "random")
UNSHARED_METHODS = ("policy", "test-time-rl")  # (SolveMethod.shares_tasks is False)
NO_PRIOR = "none"
SEEN_IDS_LISTED = 10  # ids named in the line on the tasks a prior saw


def _budget(text: str) -> Any:
    from jaxarc.solve.method import Budget, BudgetError

    try:
        return Budget.parse(text)
    except BudgetError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    solve = subparsers.add_parser(
        "solve",
        help="two attempts at every test input of a source, written as an ARC Prize "
        "submission; scores itself where the test outputs are known",
        description="Solve every task of a source from its demonstrations and write the ARC "
        "Prize submission {task_id: [{attempt_1, attempt_2}, ...]}. search (the default): "
        "breadth-first search over sequences of up to --depth environment actions, tilings, "
        "then programs of the content language (a view that fixes the output size, then "
        "mask rules and colours played as MaskActions) that turn every demonstration input "
        "into its output. program-rl: a program policy over the environment's actions "
        "learned per task by GRPO on its demonstrations, from the prior over programs "
        "shipped with jaxarc. Experimental, kept for comparison: random "
        "(random action sequences), policy (a trained network, frozen) and test-time-rl "
        "(the network fine-tuned on each task's demonstrations). Test outputs are never "
        "read while solving; where they are known, pass@2 by task is reported.",
    )
    solve.add_argument(
        "--source",
        required=True,
        help="arc-agi-1/evaluation, a directory of ARC JSON files, or a Kaggle challenges file",
    )
    solve.add_argument(
        "--solutions", type=Path, default=None, help="Kaggle solutions file (for scoring)"
    )
    solve.add_argument(
        "--method",
        choices=METHODS,
        default=None,
        help=f"default {DEFAULT_METHOD} (program-rl when --prior is given); program-rl; "
        f"experimental: {', '.join(EXPERIMENTAL)}",
    )
    solve.add_argument(
        "--prior",
        default=None,
        metavar="DIR",
        help="program-rl: the prior to learn each task from (a jaxarc pretrain-programs "
        f"--run-dir), or '{NO_PRIOR}' to start every task uniform; default: the prior "
        "shipped with jaxarc. The tasks are learned with the settings the prior records",
    )
    solve.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        metavar="RUN",
        help="policy, test-time-rl: a jaxarc train run",
    )
    solve.add_argument(
        "--depth", type=positive_int, default=None, help="search, random: actions per sequence"
    )
    solve.add_argument(
        "--budget",
        type=_budget,
        default=None,
        help="per task: program-rl: N program steps per demonstration (whole updates of "
        "64 programs x 16 actions); search: '30s' or N action sequences tried; policy: N "
        "environment steps per attempt; test-time-rl: N environment steps of learning",
    )
    solve.add_argument(
        "--tasks-at-once",
        type=positive_int,
        default=None,
        metavar="N",
        help="test-time-rl: tasks learned together (vmapped; more use more memory)",
    )
    solve.add_argument("--out", required=True, help="the submission JSON")
    solve.add_argument("--limit", type=positive_int, default=None, help="first N tasks")
    solve.add_argument(
        "--batch-size", type=positive_int, default=32, metavar="N", help="policy: episodes"
    )
    solve.add_argument("--seed", type=int, default=0)
    add_runtime_flags(solve)
    solve.set_defaults(func=run_solve)


def _check_flags(args: argparse.Namespace) -> None:
    """One line for any flag the method does not take or needs and lacks. Without
    ``--method``, the method is program-rl when ``--prior`` is given, else the default."""
    if args.method is None:
        args.method = "program-rl" if args.prior is not None else DEFAULT_METHOD
    method = args.method
    if args.source.startswith("gen/"):
        raise CLIError(f"{args.source}: solve takes ARC tasks (a bank), not a generated family")
    if args.prior is not None and method != "program-rl":
        raise CLIError(f"--prior applies to --method program-rl, not {method}")
    if args.checkpoint is not None and (Path(args.checkpoint) / "prior.npz").exists():
        raise CLIError(
            f"--checkpoint {args.checkpoint} is a program prior: give it as --prior "
            f"{args.checkpoint} (--checkpoint is a trained network run)"
        )
    if method in CHECKPOINT_METHODS and args.checkpoint is None:
        raise CLIError(f"--method {method} needs --checkpoint RUN")
    if method not in CHECKPOINT_METHODS and args.checkpoint is not None:
        raise CLIError(f"--checkpoint applies to --method policy or test-time-rl, not {method}")
    if method not in DEPTH_METHODS and args.depth is not None:
        raise CLIError(f"--depth applies to --method search or random, not {method}")
    if method != "test-time-rl" and args.tasks_at_once is not None:
        raise CLIError(f"--tasks-at-once applies to --method test-time-rl, not {method}")
    if method in UNSHARED_METHODS and (args.num_processes or 1) > 1:
        raise CLIError(
            f"--method {method} draws every task's random keys from one stream: run it as one "
            "process (without --num-processes)"
        )
    budget = args.budget
    if method == "random" and budget is not None:
        raise CLIError("--budget does not apply to --method random")
    if method not in ("search", "random") and budget is not None and budget.seconds is not None:
        raise CLIError(f"--method {method} takes a budget in steps per task, not seconds")


def progress_log_path(out: Path) -> Path:
    """Where test-time RL keeps its finished tasks until the submission is written."""
    return out.with_suffix(".progress.jsonl")


def _output_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    """The submission and report paths, each checked (one line, exit 2, before any work)."""
    out = check_output_file(args.out, "--out")
    report = check_output_file(out.with_suffix(".report.json"), "--out (its report)")
    if args.method == "test-time-rl":
        check_output_file(progress_log_path(out), "--out (its progress log)")
    return out, report


def _build_method(args: argparse.Namespace, out: Path) -> Any:
    """The method the flags name, built (and so checked) before the first task."""
    steps = None if args.budget is None else args.budget.steps
    if args.method == "program-rl":
        from jaxarc.solve.program_rl_method import DEFAULT_PRIOR_DIR, ProgramRLMethod

        prior = {None: DEFAULT_PRIOR_DIR, NO_PRIOR: None}.get(args.prior, args.prior)
        return ProgramRLMethod.with_budget(
            None if prior is None else Path(prior), steps, seed=args.seed
        )
    if args.method in DEPTH_METHODS:
        from jaxarc.solve.method import Budget
        from jaxarc.solve.search_method import (
            RandomConfig,
            RandomMethod,
            SearchConfig,
            SearchMethod,
        )

        depth = 2 if args.depth is None else args.depth
        if args.method == "search":
            return SearchMethod(SearchConfig(depth, args.budget or Budget()))
        return RandomMethod(RandomConfig(depth, args.seed))
    from jaxarc.solve.policy_finetune import TestTimeConfig
    from jaxarc.solve.policy_methods import (
        FrozenPolicyConfig,
        FrozenPolicyMethod,
        PolicyFinetuneConfig,
        PolicyFinetuneMethod,
    )

    if args.method == "policy":
        config = FrozenPolicyConfig(args.checkpoint, steps, args.batch_size, args.seed)
        return FrozenPolicyMethod(config)
    finetune = TestTimeConfig(tasks_at_once=args.tasks_at_once or 1)
    return PolicyFinetuneMethod(
        PolicyFinetuneConfig(args.checkpoint, steps, finetune, progress_log_path(out), args.seed)
    )


def run_solve(args: argparse.Namespace) -> int:
    _check_flags(args)
    out, report_path = _output_paths(args)
    primary = prepare_runtime(args)
    from jaxarc.benchmarking.compile_clock import CompileClock
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.attempts import solved_by_solutions
    from jaxarc.solve.method import MethodError
    from jaxarc.solve.problem import ProblemError, known_test_outputs, problems_from_bank
    from jaxarc.solve.sharing import ShareError, TaskSharing, solve_share
    from jaxarc.solve.submission import entries, score_submission, validate_submission

    start = time.perf_counter()
    try:
        method = _build_method(args, out)
    except MethodError as err:
        raise CLIError(str(err)) from None
    try:
        bank = load_bank(args.source, solutions=args.solutions)
    except ValueError as err:
        raise CLIError(f"cannot load {args.source}: {err}") from None
    if args.limit is not None:
        bank = bank.subset(range(min(args.limit, bank.num_tasks)))
    try:
        problems = problems_from_bank(bank)
    except ProblemError as err:
        raise CLIError(str(err)) from None
    seen = _seen_by_prior(method, problems, args.source, primary)
    try:
        sharing = TaskSharing.of_this_process(problems)
    except ShareError as err:
        raise CLIError(str(err)) from None
    label = f"{args.source}: {method.describe()}"
    if sharing.count > 1:
        mine = len(sharing.share.problems)
        label += f" (process 0 of {sharing.count}: {mine} of {len(problems)} tasks)"
    progress = TaskProgress(label, enabled=primary)
    with CompileClock() as clock:  # (making programs is reported apart from running them)
        try:
            gathered = solve_share(method, sharing, _plan(args, method), progress)
        except (MethodError, ShareError) as err:
            raise CLIError(str(err)) from None
        finally:
            progress.close()
    if gathered is None:  # (this process's share is with process 0, which writes)
        return 0
    attempts, records = gathered
    submission = {p.task_id: entries(attempts[p.task_id]) for p in problems}
    validate_submission(submission, {p.task_id: p.num_tests for p in problems})
    seconds = time.perf_counter() - start
    score = score_submission(submission, known_test_outputs(bank), leave_out=seen or ())
    by_solutions = solved_by_solutions(score["tasks"], records)
    report = {
        "source": args.source,
        "method": method.name,
        "experimental": method.experimental,
        "budget": (args.budget.describe() if args.budget is not None else "none"),
        "seed": args.seed,
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
    _write(out, report_path, submission, report)
    progress_log_path(out).unlink(missing_ok=True)  # (its tasks are in the two)
    print(solve_summary(report))
    print(f"submission: {out}\nreport: {report_path}")
    return 0


def _plan(args: argparse.Namespace, method: Any) -> dict[str, Any]:
    """What every process of a run must agree on besides its tasks (JSON types)."""
    budget = args.budget.describe() if args.budget is not None else "none"
    return {"method": method.name, "budget": budget, "seed": args.seed, **method.settings()}


def _seen_by_prior(method: Any, problems: list, source: str, primary: bool) -> list[str] | None:
    """program-rl: the ids of the tasks its prior was pretrained on (by content), named in
    one line when there are any; ``None`` for other methods or a prior that records no task
    hashes (one line says so)."""
    if method.name != "program-rl":
        return None
    from jaxarc.solve.method import MethodError

    try:
        seen = method.tasks_seen_by_prior(problems)
    except MethodError as err:
        raise CLIError(str(err)) from None
    if primary and seen is None:
        print(f"the prior records no task hashes: which tasks of {source} it saw is unknown")
    elif primary and seen:
        named = ", ".join(seen[:SEEN_IDS_LISTED]) + (", ..." if len(seen) > SEEN_IDS_LISTED else "")
        print(
            f"prior saw {len(seen)} of {len(problems)} tasks of {source} (left out of the "
            f"score): {named}"
        )
    return seen


def _speed(clock: Any, method: Any, seconds: float, learned_tasks: int) -> dict[str, Any]:
    """The run's speed with making programs apart; with the steps the method counts,
    ``<unit>_per_second`` (e.g. ``program_steps_per_second``: program steps played per
    demonstration pair, a second)."""
    speed = clock.speed(seconds, learned_tasks)
    per_task = method.steps_per_task()
    if per_task and learned_tasks:
        running = max(seconds - clock.seconds, 1e-9)
        speed[f"{method.step_unit}_per_second"] = round(per_task * learned_tasks / running)
    return speed


def _write(out: Path, report_path: Path, submission: dict, report: dict) -> None:
    """Both files or neither, each atomically; a write that still fails is one line."""
    from jaxarc.solve.submission import write_json_atomic

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out, submission)
        try:
            write_json_atomic(report_path, report)
        except BaseException:
            out.unlink(missing_ok=True)
            raise
    except OSError as err:
        raise CLIError(f"cannot write {err.filename or out}: {err.strerror or err}") from None


def solve_summary(report: dict[str, Any]) -> str:
    """One line: what was solved, or that nothing could be scored."""
    from jaxarc.cli.evaluate import percent

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
