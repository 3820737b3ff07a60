"""``jaxarc solve``: two attempts at every test input of a task source, written as an ARC
Prize submission (see ``docs/solve.md``).

Methods: ``search`` (breadth-first search over the environment's actions, to ``--depth``),
``random`` (random sequences of the same actions), ``policy`` (a trained checkpoint,
frozen: one greedy and one sampled episode) and ``test-time-rl`` (a copy of the checkpoint's
policy learns each task by GRPO on its demonstration pairs, then plays like ``policy``).
The submission is written atomically, after every task is solved and the result validated:
on any error nothing is written. Where the
source knows its test outputs the run scores itself (pass@2 by task) and a report with one
entry per task is written beside the submission (``<out>`` with ``.report.json``).
Test-time RL keeps each task it finishes in ``<out>`` with ``.progress.jsonl``
(:mod:`jaxarc.solve.progress_log`) until the submission is written: the same command after
a stop resumes from them, with the submission an uninterrupted run would have written.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from jaxarc.cli.arg_types import positive_int
from jaxarc.cli.main import CLIError
from jaxarc.cli.progress import TaskProgress
from jaxarc.cli.runtime import add_runtime_flags, prepare_runtime

METHODS = ("search", "random", "policy", "test-time-rl", "program-rl")  # (no jax import here)
POLICY_METHODS = ("policy", "test-time-rl")
LEARNING_METHODS = ("test-time-rl", "program-rl")  # (learn each task; --budget in env steps)
CHECKPOINT_METHODS = (*POLICY_METHODS, "program-rl")
TEST_TIME_UPDATES = 16  # jaxarc.solve.test_time.TestTimeConfig().updates


def _budget(text: str) -> Any:
    from jaxarc.solve.solver import Budget, BudgetError

    try:
        return Budget.parse(text)
    except BudgetError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    solve = subparsers.add_parser(
        "solve",
        help="two attempts at every test input of a source, written as an ARC Prize "
        "submission (search, random or a trained policy); scores itself where the test "
        "outputs are known",
        description="Solve every task of a source from its demonstrations and write the ARC "
        "Prize submission {task_id: [{attempt_1, attempt_2}, ...]}. search: breadth-first "
        "search over sequences of up to --depth environment actions that turn every "
        "demonstration input into its output. random: random sequences of the same actions. "
        "policy: a trained checkpoint, frozen. test-time-rl: a copy of the checkpoint's policy "
        "learns each task by GRPO on its demonstration pairs (leave-one-out), then plays its "
        "test inputs. Test outputs are never read while solving; "
        "where they are known, pass@2 by task is reported.",
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
        help="default: test-time-rl with --checkpoint, else search",
    )
    solve.add_argument(
        "--depth", type=positive_int, default=2, help="search, random: actions per sequence"
    )
    solve.add_argument(
        "--checkpoint", type=Path, default=None, metavar="RUN", help="policy, test-time-rl"
    )
    solve.add_argument(
        "--budget",
        type=_budget,
        default=None,
        help="per task: '30s' (search: seconds) or N (search: action sequences tried; "
        "policy: environment steps per attempt; test-time-rl: environment steps of learning, "
        f"default {TEST_TIME_UPDATES} updates)",
    )
    solve.add_argument(
        "--tasks-at-once",
        type=positive_int,
        default=1,
        metavar="N",
        help="test-time-rl: tasks learned together (vmapped; more use more memory)",
    )
    solve.add_argument("--out", type=Path, required=True, help="the submission JSON")
    solve.add_argument("--limit", type=positive_int, default=None, help="first N tasks")
    solve.add_argument("--batch-size", type=positive_int, default=32, metavar="N")
    solve.add_argument("--seed", type=int, default=0)
    add_runtime_flags(solve)
    solve.set_defaults(func=run_solve)

    pretrain = subparsers.add_parser(
        "pretrain-programs",
        help="learn a prior over programs by reward on ARC tasks' demonstrations, for "
        "jaxarc solve --method program-rl",
        description="GRPO on a prior over action kinds (jaxarc.solve.program_prior), task "
        "after task, from the demonstration pairs of a source's tasks (test inputs and "
        "outputs are not used). Writes prior.npz and prior.json into --run-dir; "
        "jaxarc solve --checkpoint RUN_DIR then learns each task from it.",
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
    pretrain.add_argument("--seed", type=int, default=0)
    add_runtime_flags(pretrain)
    pretrain.set_defaults(func=run_pretrain)


def run_pretrain(args: argparse.Namespace) -> int:
    """``jaxarc pretrain-programs``: the prior, saved in ``--run-dir``."""
    primary = prepare_runtime(args)
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.problem import ProblemError, problems_from_bank
    from jaxarc.solve.program_prior import PriorConfig, pretrain_and_save

    if args.skip < 0:
        raise CLIError(f"--skip {args.skip}: at least 0")
    if args.source.startswith("gen/"):
        raise CLIError(f"{args.source}: pretrain-programs takes ARC tasks, not a generated family")
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
    label = f"{args.source}: pretraining a program prior on {len(problems)} tasks"
    progress = TaskProgress(label, enabled=primary)
    try:
        info = pretrain_and_save(
            problems,
            config,
            args.run_dir,
            seed=args.seed,
            source=f"{args.source}[{args.skip}:{end}]",
            progress=progress,
        )
    finally:
        progress.close()
    solved = len(info["history"][-1]["tasks_solved"])
    print(
        f"prior: {args.run_dir} ({len(problems)} tasks x {config.rounds} rounds, "
        f"{info['seconds']} s); in the last round a sampled or greedy program solved every "
        f"demonstration of {solved} of {len(problems)} tasks"
    )
    return 0


def _check_flags(args: argparse.Namespace) -> None:
    from jaxarc.solve.program_prior import is_prior_dir

    if args.method is None:  # a checkpoint is there to learn the tasks
        if args.checkpoint is None:
            args.method = "search"
        else:
            args.method = "program-rl" if is_prior_dir(args.checkpoint) else "test-time-rl"
    if args.method in POLICY_METHODS and args.checkpoint is None:
        raise CLIError(f"--method {args.method} needs --checkpoint RUN")
    if args.method not in CHECKPOINT_METHODS and args.checkpoint is not None:
        raise CLIError(
            "--checkpoint applies to --method policy, test-time-rl or program-rl, not "
            f"{args.method}"
        )
    if args.method == "program-rl" and args.checkpoint and not is_prior_dir(args.checkpoint):
        raise CLIError(
            f"--method program-rl --checkpoint {args.checkpoint}: not a program prior "
            "(no prior.npz; make one with jaxarc pretrain-programs)"
        )
    if args.method in POLICY_METHODS and is_prior_dir(args.checkpoint):
        raise CLIError(
            f"--checkpoint {args.checkpoint} is a program prior: use --method program-rl"
        )
    if args.method == "policy" and args.budget is not None and args.budget.seconds is not None:
        raise CLIError("--method policy takes a budget in steps per attempt, not seconds")
    if args.method in LEARNING_METHODS and args.budget is not None and args.budget.seconds:
        raise CLIError(
            f"--method {args.method} takes a budget in environment steps per task, not seconds"
        )
    if args.method != "test-time-rl" and args.tasks_at_once != 1:
        raise CLIError(f"--tasks-at-once applies to --method test-time-rl, not {args.method}")
    if args.method == "random" and args.budget is not None:
        raise CLIError("--budget does not apply to --method random")
    if args.source.startswith("gen/"):
        raise CLIError(f"{args.source}: solve takes ARC tasks (a bank), not a generated family")


def _policy_attempts(args: argparse.Namespace, problems: list, progress: TaskProgress):
    import jax

    from jaxarc.agents.run.evaluate import EvaluationError, load_trained_policy
    from jaxarc.solve.policy_attempts import policy_attempts

    try:
        config, policy, path = load_trained_policy(args.checkpoint)
        steps = args.budget.steps if args.budget is not None else int(config.max_episode_steps)
        attempts = policy_attempts(
            policy,
            config.env_config().action,
            problems,
            max_episode_steps=steps,
            batch_size=args.batch_size,
            key=jax.random.key(args.seed),
            progress=progress,
        )
    except EvaluationError as err:
        raise CLIError(str(err)) from None
    info = {"checkpoint": str(path), "max_episode_steps": steps}
    return attempts, {p.task_id: {} for p in problems}, info


def _test_time_rl_attempts(args: argparse.Namespace, problems: list, progress: TaskProgress):
    import jax

    from jaxarc.agents.run.evaluate import EvaluationError, load_trained_policy
    from jaxarc.solve.test_time import TestTimeConfig, attempts_after_test_time_rl

    try:
        config, policy, path = load_trained_policy(args.checkpoint)
    except EvaluationError as err:
        raise CLIError(str(err)) from None
    tt = TestTimeConfig(tasks_at_once=args.tasks_at_once)
    if args.budget is not None:
        per_update = tt.env_steps_per_update(config.max_episode_steps)
        what = (
            f"one test-time update takes {per_update} environment steps ({tt.batch_tasks} "
            f"groups x {tt.group_size} rollouts x {config.max_episode_steps} steps)"
        )
        tt = dataclasses.replace(tt, updates=_updates_in_budget(args.budget, per_update, what))
    log, finished = _open_progress_log(args, problems, path, tt)
    if finished and progress.enabled:
        print(
            f"resuming: {len(finished)} of {len(problems)} tasks were finished by a stopped "
            f"run of this command ({log.path})",
            file=sys.stderr,
        )
    learned: list[str] = []  # (the tasks this process learns; the others come from the log)

    def on_finished(chunk: dict, chunk_infos: dict) -> None:
        learned.extend(chunk)
        if log is not None:
            log.record(chunk, chunk_infos)

    try:
        attempts, infos = attempts_after_test_time_rl(
            policy,
            config,
            problems,
            tt,
            key=jax.random.key(args.seed),
            progress=progress,
            finished=finished,
            on_finished=on_finished,
        )
    except EvaluationError as err:
        raise CLIError(str(err)) from None
    info = {
        "resumed_tasks": len(problems) - len(learned),
        "checkpoint": str(path),
        "max_episode_steps": int(config.max_episode_steps),
        "test_time_updates": tt.updates,
        "test_time_env_steps_per_task": tt.env_steps_per_task(config.max_episode_steps),
        "tasks_at_once": tt.tasks_at_once,
    }
    return attempts, infos, info


def _updates_in_budget(budget: Any, per_update: int, what: str) -> int:
    """The whole updates that ``budget`` (in steps) pays for; one line naming ``what`` one
    update costs when it pays for none."""
    if budget.steps < per_update:
        raise CLIError(f"--budget {budget.steps}: {what}; give at least that")
    return budget.steps // per_update


def _program_rl_attempts(args: argparse.Namespace, problems: list, progress: TaskProgress):
    from jaxarc.solve.program_prior import PriorError, load_prior
    from jaxarc.solve.program_rl import ProgramRLConfig, solve_with_program_rl

    prior, config, source = None, ProgramRLConfig(), "none (uniform)"
    if args.checkpoint is not None:
        try:
            prior, prior_config = load_prior(args.checkpoint)
        except PriorError as err:
            raise CLIError(str(err)) from None
        config, source = prior_config.program, str(args.checkpoint)
    if args.budget is not None:
        per_update = config.restarts * config.group_size * config.program_length
        what = (
            f"one program-rl update takes {per_update} program steps per demonstration "
            f"({config.restarts} restarts x {config.group_size} programs x "
            f"{config.program_length} actions)"
        )
        updates = _updates_in_budget(args.budget, per_update, what)
        config = dataclasses.replace(config, updates=updates)
    attempts, infos = solve_with_program_rl(
        problems, config, seed=args.seed, prior=prior, progress=progress
    )
    info = {
        "prior": source,
        "program_rl": dataclasses.asdict(config),
        "program_rl_env_steps_per_task": config.env_steps_per_task,
    }
    return attempts, infos, info


def progress_log_path(out: Path) -> Path:
    """Where a test-time RL run keeps its finished tasks until its submission is written."""
    return out.with_suffix(".progress.jsonl")


def _open_progress_log(args: argparse.Namespace, problems: list, checkpoint: Path, tt: Any):
    """``(log, finished tasks)``; ``(None, {})`` in a run of several processes (each would
    need the log; such a run does not resume)."""
    import jax

    from jaxarc import __version__
    from jaxarc.solve.progress_log import (
        ProgressLog,
        ProgressLogError,
        directory_digest,
        problems_digest,
    )

    if jax.process_count() > 1:
        return None, {}
    header = {
        "method": args.method,
        "tasks_sha256": problems_digest(problems)[:16],
        "checkpoint_sha256": directory_digest(checkpoint)[:16],
        "seed": args.seed,
        "test_time_updates": tt.updates,
        "tasks_at_once": tt.tasks_at_once,
        "jaxarc": __version__,
    }
    try:
        return ProgressLog.open(progress_log_path(args.out), header)
    except ProgressLogError as err:
        raise CLIError(str(err)) from None


def run_solve(args: argparse.Namespace) -> int:
    _check_flags(args)
    primary = prepare_runtime(args)
    from jaxarc.benchmarking.compile_clock import CompileClock
    from jaxarc.data.loading import load_bank
    from jaxarc.solve.problem import ProblemError, known_test_outputs, problems_from_bank
    from jaxarc.solve.solver import Budget, solve_problems
    from jaxarc.solve.submission import entries, score_submission, validate_submission

    start = time.perf_counter()
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
    budget = args.budget or Budget()
    if args.method == "policy":
        label = f"{args.source}: policy (the first batch compiles the program)"
    elif args.method == "program-rl":
        label = f"{args.source}: program-rl (each canvas and vocabulary size compiles once)"
    elif args.method == "test-time-rl":
        label = (
            f"{args.source}: test-time RL (the first task of each bank of tasks compiles the "
            "update, up to ~1 min)"
        )
    else:
        label = (
            f"{args.source}: {args.method} depth {args.depth} (the first task of each canvas "
            "size and grid count compiles a program)"
        )
    progress = TaskProgress(label, enabled=primary)
    run_info: dict[str, Any] = {}
    with CompileClock() as clock:  # (making programs is reported apart from running them)
        try:
            if args.method == "policy":
                attempts, infos, run_info = _policy_attempts(args, problems, progress)
            elif args.method == "test-time-rl":
                attempts, infos, run_info = _test_time_rl_attempts(args, problems, progress)
            elif args.method == "program-rl":
                attempts, infos, run_info = _program_rl_attempts(args, problems, progress)
            else:
                attempts, infos = solve_problems(
                    problems,
                    args.method,
                    depth=args.depth,
                    budget=budget,
                    seed=args.seed,
                    progress=progress,
                )
        except ValueError as err:
            raise CLIError(str(err)) from None
        finally:
            progress.close()
    submission = {p.task_id: entries(attempts[p.task_id]) for p in problems}
    validate_submission(submission, {p.task_id: p.num_tests for p in problems})
    seconds = time.perf_counter() - start
    score = score_submission(submission, known_test_outputs(bank))
    learned = len(problems) - run_info.get("resumed_tasks", 0)  # (by this process)
    report = {
        "source": args.source,
        "method": args.method,
        "depth": args.depth if args.method in ("search", "random") else None,
        "budget": budget.describe(),
        "seed": args.seed,
        "num_tasks": len(problems),
        "wall_seconds": round(seconds, 1),
        **clock.speed(seconds, learned, _learning_steps(run_info, learned)),
        **run_info,
        **{k: v for k, v in score.items() if k != "tasks"},
        "tasks": {
            task_id: {**infos.get(task_id, {}), **score["tasks"].get(task_id, {})}
            for task_id in submission
        },
    }
    if primary:
        from jaxarc.solve.submission import write_json_atomic

        args.out.parent.mkdir(parents=True, exist_ok=True)
        report_path = args.out.with_suffix(".report.json")
        write_json_atomic(args.out, submission)
        try:
            write_json_atomic(report_path, report)
        except BaseException:
            args.out.unlink(missing_ok=True)  # both files or neither
            raise
        progress_log_path(args.out).unlink(missing_ok=True)  # (its tasks are in the two)
        print(solve_summary(report))
        print(f"submission: {args.out}\nreport: {report_path}")
    return 0


def _learning_steps(run_info: dict[str, Any], num_tasks: int) -> int | None:
    """The environment steps test-time RL spent learning (``None`` for the other methods)."""
    per_task = run_info.get("test_time_env_steps_per_task") or run_info.get(
        "program_rl_env_steps_per_task"
    )
    return per_task * num_tasks if per_task else None


def solve_summary(report: dict[str, Any]) -> str:
    """One line: what was solved, or that nothing could be scored."""
    from jaxarc.cli.evaluate import percent

    what = f"{report['source']}: {report['num_tasks']} tasks, {report['method']}"
    if report["depth"] is not None:
        what += f" depth {report['depth']}"
    what += f" (budget {report['budget']}), {report['wall_seconds']} s"
    if "compile_seconds" in report:
        what += f" ({report['compile_seconds']} s making programs)"
    if not report["scored_tasks"]:
        return f"{what}; no test outputs known: not scored"
    return (
        f"{what}; solved {report['solved_tasks']} of {report['scored_tasks']} tasks "
        f"(pass@2 by task: {percent(report['solve_rate'])}); test inputs "
        f"{report['solved_pairs']} of {report['scored_pairs']}"
    )
