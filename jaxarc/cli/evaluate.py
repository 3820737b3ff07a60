"""``jaxarc eval``: the solve rate of a checkpoint (or a zero-learning baseline).

On a task bank (``arc-agi-1/evaluation``, ...) every scored test pair is played ``--attempts``
times and the report is pass@k by task; a progress bar follows the tasks, and the first
batch, which compiles the evaluation program, says so. With ``--by-family`` a generator
(``gen/easy``, ...) is scored greedily on ``--limit`` fresh tasks, overall and per family,
in one compiled call. Rates are printed in percent; the JSON report keeps fractions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from jaxarc.agents.run.task_progress import TaskProgress, percent
from jaxarc.cli.arg_types import non_negative_int, positive_int
from jaxarc.cli.main import CLIError
from jaxarc.cli.runtime import add_runtime_flags, prepare_runtime

BASELINES = ("predictor-rule",)  # jaxarc.agents.run.evaluate.BASELINES (no jax import here)
MAX_CANVAS_SIDE = 32
"""``UnifiedDatasetConfig``'s limit (rows are bit-packed in 32-bit words), said in the
flag's own words."""


def _canvas_side(text: str) -> int:
    value = positive_int(text)
    if value > MAX_CANVAS_SIDE:
        raise argparse.ArgumentTypeError(
            f"expected a canvas side in 1..{MAX_CANVAS_SIDE}, got {value}"
        )
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    evaluate = subparsers.add_parser(
        "eval",
        help="solve rate of a checkpoint (or a baseline): pass@k on ARC test pairs, greedy "
        "success per family on generated tasks",
        description="Evaluate a trained checkpoint or a zero-learning baseline: pass@k by task "
        "over sampled attempts on a task bank (arc-agi-1/evaluation, ...) or on --limit tasks "
        "of a generator (gen/easy, ...). With --by-family a generator is scored greedily on "
        "--limit (default 512) fresh tasks, overall and per family, optionally on a larger "
        "--canvas with grids of at least --min-side cells.",
    )
    who = evaluate.add_mutually_exclusive_group(required=True)
    who.add_argument("--checkpoint", type=Path, metavar="DIR")
    who.add_argument(
        "--baseline",
        choices=BASELINES,
        help="predictor-rule: flood each region the hand-made cell predictor marks wrong "
        "with its predicted colour, then submit (no learning; point actions, 10 steps)",
    )
    evaluate.add_argument("--source", default="arc-agi-1/evaluation", help="task source")
    evaluate.add_argument(
        "--by-family",
        action="store_true",
        help="gen/...: greedy success per family on --limit fresh tasks (default 512)",
    )
    evaluate.add_argument(
        "--canvas",
        type=_canvas_side,
        default=None,
        help=f"--by-family: canvas side, 1..{MAX_CANVAS_SIDE} (rows are bit-packed in 32-bit "
        "words)",
    )
    evaluate.add_argument(
        "--min-side",
        type=non_negative_int,
        default=0,
        help="--by-family: smallest grid side drawn (0: each family's own)",
    )
    evaluate.add_argument("--attempts", type=positive_int, default=2, help="k of pass@k")
    evaluate.add_argument(
        "--max-episode-steps", type=positive_int, default=None, help="per attempt"
    )
    evaluate.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        help="first N tasks (generated sources: N new tasks, default the run's eval_tasks)",
    )
    evaluate.add_argument("--batch-size", type=positive_int, default=32, metavar="N")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--out", type=Path, default=None, help="per-task results JSON")
    add_runtime_flags(evaluate)
    evaluate.set_defaults(func=run_eval)


def check_eval_flags(args: argparse.Namespace) -> None:
    """:class:`CLIError` for flags that would be ignored or fail inside the evaluation."""
    from jaxarc.data.loading import GENERATOR_PREFIX

    generated = args.source.startswith(GENERATOR_PREFIX)
    if args.by_family and not generated:
        raise CLIError(
            f"--by-family scores the families of a generated source: it needs a "
            f"{GENERATOR_PREFIX}... --source (e.g. gen/easy), got {args.source!r}"
        )
    if (args.canvas is not None or args.min_side) and not args.by_family:
        raise CLIError("--canvas and --min-side apply with --by-family only")
    if args.canvas is not None and args.min_side > args.canvas:
        raise CLIError(f"--min-side {args.min_side} exceeds --canvas {args.canvas}")


def run_eval(args: argparse.Namespace) -> int:
    check_eval_flags(args)  # (before anything is loaded or compiled)
    primary = prepare_runtime(args)
    from jaxarc.agents.run.evaluate import EvaluationError, evaluate_checkpoint

    if primary and args.by_family and args.source.startswith("gen/"):
        print(
            f"{args.source}: compiling the evaluator, then playing {args.limit or 512} fresh "
            "tasks in one call",
            flush=True,
        )
    progress = TaskProgress(
        f"{args.source}: compiling the evaluation program (first batch of "
        f"{args.batch_size} episodes)",
        f"{args.source}: pass@{args.attempts}",
        enabled=primary,
    )
    try:
        report = evaluate_checkpoint(
            args.checkpoint,
            args.source,
            baseline=args.baseline,
            attempts=args.attempts,
            max_episode_steps=args.max_episode_steps,
            limit=args.limit,
            batch_size=args.batch_size,
            seed=args.seed,
            by_family=args.by_family,
            canvas=args.canvas,
            min_side=args.min_side,
            progress=progress,
        )
    except EvaluationError as err:
        raise CLIError(str(err)) from None
    finally:
        progress.close()
    where = args.checkpoint or Path("runs") / f"baseline_{args.baseline}"
    out = args.out or where / f"eval_{args.source.replace('/', '_')}.json"
    if primary:
        out.parent.mkdir(parents=True, exist_ok=True)
        from jaxarc.agents.run.checkpoint import write_text_atomic

        write_text_atomic(out, json.dumps(report, indent=2))  # a full disk keeps the old one
        print(eval_summary(report, args.attempts))
        print(f"results: {out}")
    return 0


def eval_summary(report: dict[str, Any], attempts: int) -> str:
    """What an evaluation report measured, in words (one line, plus one per family)."""
    if "families" in report:
        side, _ = report["canvas"]
        grids = f", grids at least {report['min_side']} cells a side" if report["min_side"] else ""
        lines = [
            f"{report['source']}: {percent(report['solve_rate'])} of {report['num_tasks']} "
            f"fresh tasks solved (greedy actions; canvas {side}x{side}{grids})"
        ]
        lines += [
            f"  {name:16s} {percent(family['solve_rate']):>6s}  of {family['episodes']} tasks"
            for name, family in report["families"].items()
        ]
        return "\n".join(lines)
    return (
        f"{report['source']}: solved {report['solved_tasks']} of {report['num_tasks']} tasks "
        f"(pass@{attempts} by task: {percent(report['solve_rate'])}); test pairs "
        f"{report['solved_pairs']} of {report['num_pairs']} "
        f"({percent(report['pair_solve_rate'])})"
    )
