"""``jaxarc pretrain-programs``: the prior over programs that ``jaxarc solve`` (program-rl)
learns each task from (:mod:`jaxarc.solve.program_prior`), fitted to the programs that
per-task learning found on a source's demonstrations.

The run directory is checked before any work. A stopped run resumes from its last finished
round when the same command is given again; a directory that holds another run's prior, or
as many rounds as asked for, is refused unless ``--fresh`` (start again, overwriting it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxarc.agents.run.task_progress import TaskProgress
from jaxarc.cli.arg_types import positive_int
from jaxarc.cli.main import CLIError
from jaxarc.cli.output_paths import check_output_dir
from jaxarc.cli.runtime import add_runtime_flags, prepare_runtime


def register(subparsers: argparse._SubParsersAction) -> None:
    pretrain = subparsers.add_parser(
        "pretrain-programs",
        help="learn the prior over programs that jaxarc solve (program-rl) starts each task "
        "from, on ARC tasks' demonstrations",
        description="Learns every task of a source from its demonstration pairs as jaxarc "
        "solve does (test inputs and outputs are not used), keeps the programs that solve "
        "a task's demonstrations, and fits a prior over action kinds to them by maximum "
        "likelihood (jaxarc.solve.program_prior); with --rounds above 1, each round learns "
        "the tasks again from the prior so far. Writes prior.npz and prior.json into "
        "--run-dir after every round; jaxarc solve --prior RUN_DIR learns each task from it. "
        "The same command after a stop resumes from the last finished round.",
    )
    pretrain.add_argument("--source", required=True, help="e.g. arc-agi-1/training")
    pretrain.add_argument("--skip", type=int, default=0, help="leave out the first N tasks")
    pretrain.add_argument("--limit", type=positive_int, default=None, help="then N tasks")
    pretrain.add_argument(
        "--rounds",
        type=positive_int,
        default=1,
        help="passes over the tasks, each learning them from the prior so far (default 1)",
    )
    pretrain.add_argument("--run-dir", type=Path, required=True)
    pretrain.add_argument(
        "--fresh",
        action="store_true",
        help="start again, overwriting a prior already in --run-dir (else a stopped run of "
        "the same command resumes, and another run's prior is refused)",
    )
    pretrain.add_argument("--seed", type=int, default=0)
    add_runtime_flags(pretrain)
    pretrain.set_defaults(func=run_pretrain)


def run_pretrain(args: argparse.Namespace) -> int:
    """``jaxarc pretrain-programs``: the prior, saved in ``--run-dir``."""
    if args.skip < 0:
        raise CLIError(f"--skip {args.skip}: at least 0")
    if args.source.startswith("gen/"):
        raise CLIError(f"{args.source}: pretrain-programs takes ARC tasks, not a generated family")
    run_dir = check_output_dir(args.run_dir, "--run-dir")
    primary = prepare_runtime(args)
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.prior_store import pretrain_and_save, resume_point
    from jaxarc.solve.problem import ProblemError, problems_from_bank
    from jaxarc.solve.program_prior import PriorConfig, PriorError

    try:
        bank = load_bank(args.source)
    except ValueError as err:
        raise CLIError(f"cannot load {args.source}: {err}") from None
    end = bank.num_tasks if args.limit is None else min(bank.num_tasks, args.skip + args.limit)
    if args.skip >= end:
        raise CLIError(f"--skip {args.skip}: {args.source} has {bank.num_tasks} tasks")
    try:
        problems = problems_from_bank(bank.subset(range(args.skip, end)))
    except ProblemError as err:
        raise CLIError(str(err)) from None
    config = PriorConfig(rounds=args.rounds)
    source = f"{args.source}[{args.skip}:{end}]"
    resume = None
    if not args.fresh:
        try:
            resume = resume_point(run_dir, problems, config, seed=args.seed, source=source)
        except PriorError as err:
            raise CLIError(f"{err}; give --fresh to overwrite it") from None
    done = len(resume.history) if resume is not None else 0
    label = f"{args.source}: pretraining a program prior on {len(problems)} tasks"
    if done and primary:
        print(f"resuming: {done} of {config.rounds} rounds are in {run_dir}")
    progress = TaskProgress(label, enabled=primary)
    try:
        info = pretrain_and_save(
            problems,
            config,
            run_dir,
            seed=args.seed,
            source=source,
            progress=progress,
            resume=resume,
        )
    finally:
        progress.close()
    solved = len(info["history"][-1]["tasks_solved"])
    print(
        f"prior: {run_dir} ({len(problems)} tasks x {config.rounds} rounds, "
        f"{info['seconds']} s); in the last round a sampled or greedy program solved every "
        f"demonstration of {solved} of {len(problems)} tasks"
    )
    return 0
