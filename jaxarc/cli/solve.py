"""``jaxarc solve``: two attempts at every test input of a task source, written as an ARC
Prize submission (see ``docs/solve.md``).

This module only parses the flags, checks them and every output path before the first
task, and hands them to :func:`jaxarc.solve.source_run.solve_source`, which builds the
method they name (a :class:`~jaxarc.solve.method.SolveMethod`, see
:mod:`jaxarc.solve.method_choice`), runs it over the tasks and assembles the report. The
submission is written atomically after every task is solved and the result validated: on
any error nothing is written. Where the source knows its test outputs the run scores itself (pass@2
by task), and a report with one entry per task is written beside the submission (``<out>``
with ``.report.json``). With a program prior, the tasks it was pretrained on are named in
one line before the first task, solved and written, and left out of the score.

In a run of several processes (``--coordinator-address``, ``--num-processes``,
``--process-id``) each solves its share of the tasks (:mod:`jaxarc.solve.sharing`) and
process 0 gathers them and writes the one submission and report; the others write nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jaxarc.cli.arg_types import positive_int
from jaxarc.cli.main import CLIError
from jaxarc.cli.output_paths import check_output_file
from jaxarc.cli.runtime import add_runtime_flags, prepare_runtime

DEFAULT_METHOD = "search"  # the best on the tuning split (ARC-AGI-1 training tasks 0-99)
METHODS = ("search", "program-rl", "random", "policy", "test-time-rl")  # (no jax import here)
EXPERIMENTAL = ("random", "policy", "test-time-rl")
CHECKPOINT_METHODS = ("policy", "test-time-rl")  # a trained network run
DEPTH_METHODS = ("search", "random")
UNSHARED_METHODS = ("policy", "test-time-rl")  # (SolveMethod.shares_tasks is False)
NO_PRIOR = "none"  # (jaxarc.solve.method_choice.NO_PRIOR)
SHIPPED_NETWORK = "network"  # (jaxarc.solve.method_choice.SHIPPED_NETWORK)


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
        help="program-rl: what each task's learning starts from: a prior over kinds (a "
        "jaxarc pretrain-programs --run-dir; the tasks are learned with the settings it "
        "records), a program network trained across tasks (a directory with network.eqx, "
        "see docs/program-network.md; the content language joins each vocabulary), "
        f"'{SHIPPED_NETWORK}' for the program network shipped with jaxarc, or '{NO_PRIOR}' "
        "to start every task uniform; default: the prior shipped with jaxarc",
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
    for file, what in (("prior.npz", "program prior"), ("network.eqx", "program network")):
        if args.checkpoint is not None and (Path(args.checkpoint) / file).exists():
            raise CLIError(
                f"--checkpoint {args.checkpoint} is a {what}: give it as --prior "
                f"{args.checkpoint} (--checkpoint is a jaxarc train run)"
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


def run_solve(args: argparse.Namespace) -> int:
    _check_flags(args)
    out, report_path = _output_paths(args)
    primary = prepare_runtime(args)
    from jaxarc.benchmarking.compile_clock import CompileClock
    from jaxarc.solve.method_choice import MethodChoice
    from jaxarc.solve.source_run import (
        SolveRequest,
        SolveRunError,
        solve_source,
        summary_line,
        write_outcome,
    )

    choice = MethodChoice(
        name=args.method,
        prior=args.prior,
        checkpoint=args.checkpoint,
        depth=args.depth,
        budget=args.budget,
        seed=args.seed,
        tasks_at_once=args.tasks_at_once,
        batch_size=args.batch_size,
        progress_log=progress_log_path(out),
    )
    request = SolveRequest(args.source, args.solutions, args.limit)
    try:
        with CompileClock() as clock:  # (making programs is reported apart from running them)
            outcome = solve_source(choice, request, clock, primary=primary)
        if outcome is None:  # (this process's share is with process 0, which writes)
            return 0
        write_outcome(out, report_path, outcome)
    except SolveRunError as err:
        raise CLIError(str(err)) from None
    choice.progress_log.unlink(missing_ok=True)  # (its tasks are in the two)
    print(summary_line(outcome.report))
    print(f"submission: {out}\nreport: {report_path}")
    return 0
