"""``jaxarc train`` (GRPO training) and ``jaxarc eval`` (solve rate of a checkpoint on ARC).

Every field of :class:`jaxarc.agents.TrainConfig` is a flag (generated from the dataclass,
see :mod:`jaxarc.cli.dataclass_flags`); ``--preset`` picks the base the flags override.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from jaxarc.cli.dataclass_flags import (
    FlagSpec,
    add_dataclass_flags,
    apply_overrides,
    describe_config,
    overrides_from_args,
)
from jaxarc.cli.main import CLIError

PRESETS = ("quick", "medium", "rl", "default")
BASELINES = ("predictor-rule",)  # jaxarc.agents.run.evaluate.BASELINES (no jax import here)
# fields that may differ from a resumed run's saved config without changing its results
_RESUMABLE_CHANGES = frozenset({("num_updates",)})
# fields whose change makes the saved train state unloadable (array shapes, action heads)
_SHAPE_FIELDS = frozenset({"policy", "canvas", "selection_format", "allowed_operations"})
# run settings saved in every checkpoint (a plain --resume keeps them) and their defaults
RUN_SETTING_DEFAULTS: dict[str, int | None] = {
    "checkpoint_every": 50,
    "keep_checkpoints": 3,
    "eval_every": 25,
}


def _train_config_class() -> type:
    from jaxarc.agents.grpo.config import TrainConfig

    return TrainConfig


def default_compile_cache_dir() -> Path:
    """``xla-compilation-cache`` under the jaxarc cache (``$JAXARC_CACHE_DIR`` or the user's)."""
    from jaxarc.data.cache import cache_root

    return cache_root() / "xla-compilation-cache"


def enable_compile_cache(directory: Path) -> None:
    """Persist compiled XLA programs in ``directory`` so later runs skip compilation."""
    import jax

    directory.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def _add_runtime_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("runtime (no effect on the results)")
    group.add_argument(
        "--compile-cache-dir",
        type=Path,
        default=None,
        help=f"persistent XLA compilation cache (default: {default_compile_cache_dir()})",
    )
    group.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not read or write the persistent compilation cache",
    )
    dist = parser.add_argument_group("multi-process (jax.distributed)")
    dist.add_argument("--coordinator-address", metavar="HOST:PORT", default=None)
    dist.add_argument("--num-processes", type=int, metavar="N", default=None)
    dist.add_argument("--process-id", type=int, metavar="I", default=None)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 (0 disables), got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train",
        help="train a GRPO agent (flags = the TrainConfig fields)",
        description="Train a GRPO agent. Every TrainConfig field is a flag; flags override "
        "--preset (or, with --resume, the resumed run's saved config).",
    )
    train.add_argument("--preset", choices=PRESETS, default=None, help="base config")
    train.add_argument("--run-dir", type=Path, default=Path("runs/train"), help="output dir")
    train.add_argument("--resume", action="store_true", help="continue from newest checkpoint")
    train.add_argument(
        "--checkpoint-every",
        type=_positive_int,
        default=None,
        metavar="N",
        help="default 50 (with --resume: the resumed run's setting)",
    )
    train.add_argument(
        "--keep-checkpoints",
        type=_positive_int,
        default=None,
        metavar="N",
        help="default 3 (with --resume: the resumed run's setting)",
    )
    train.add_argument(
        "--eval-every",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="held-out success rate (eval_tasks fresh episodes) every N updates and at the "
        "end; 0 disables (default 25; with --resume: the resumed run's setting)",
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument("--no-tensorboard", action="store_true", help="never write TensorBoard")
    train.add_argument("--profile", type=Path, default=None, metavar="DIR", help="trace dir")
    train.add_argument("--dry-run", action="store_true", help="print the config and exit")
    _add_runtime_flags(train)
    config_group = train.add_argument_group("training config (TrainConfig fields)")
    specs = add_dataclass_flags(config_group, _train_config_class()())
    train.set_defaults(func=lambda args: run_train(args, specs, train))

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
        "--canvas", type=_positive_int, default=None, help="--by-family: canvas side"
    )
    evaluate.add_argument(
        "--min-side", type=int, default=0, help="--by-family: smallest grid side drawn"
    )
    evaluate.add_argument("--attempts", type=_positive_int, default=2, help="k of pass@k")
    evaluate.add_argument(
        "--max-episode-steps", type=_positive_int, default=None, help="per attempt"
    )
    evaluate.add_argument(
        "--limit",
        type=_positive_int,
        default=None,
        help="first N tasks (generated sources: N new tasks, default the run's eval_tasks)",
    )
    evaluate.add_argument("--batch-size", type=_positive_int, default=32, metavar="N")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--out", type=Path, default=None, help="per-task results JSON")
    _add_runtime_flags(evaluate)
    evaluate.set_defaults(func=run_eval)


def _distributed_config(args: argparse.Namespace) -> Any:
    from jaxarc.agents.run.distributed import DistributedConfig

    try:
        return DistributedConfig(args.coordinator_address, args.num_processes, args.process_id)
    except ValueError as err:
        raise CLIError(str(err)) from None


def _join_distributed(args: argparse.Namespace) -> bool:
    """Join the distributed run (before any JAX work); returns "am I primary"."""
    from jaxarc.agents.run.distributed import initialize_distributed, is_primary_process

    initialize_distributed(_distributed_config(args))
    return is_primary_process()


def _enable_compile_cache(args: argparse.Namespace) -> None:
    if not args.no_compile_cache:
        enable_compile_cache(args.compile_cache_dir or default_compile_cache_dir())


def _prepare_runtime(args: argparse.Namespace) -> bool:
    """Join the distributed run and switch on the compile cache; returns "am I primary"."""
    primary = _join_distributed(args)
    _enable_compile_cache(args)
    return primary


def resolve_train_config(
    args: argparse.Namespace, specs: list[FlagSpec], parser: argparse.ArgumentParser
) -> tuple[Any, Path | None]:
    """The run's config (preset or resumed config, then flags) and the checkpoint to resume."""
    from jaxarc.agents.run.checkpoint import (
        CheckpointError,
        config_from_dict,
        latest_intact_checkpoint,
    )

    cls = _train_config_class()
    try:
        overrides = overrides_from_args(args, specs)
    except ValueError as err:
        parser.error(str(err))
    # a damaged newest checkpoint is skipped with a warning (the run uses the same one)
    resume_from = latest_intact_checkpoint(args.run_dir / "checkpoints") if args.resume else None
    if resume_from is not None:
        if args.preset is not None:
            parser.error("--preset cannot be combined with --resume (the run's config is used)")
        try:
            base = config_from_dict(cls, json.loads((resume_from / "config.json").read_text()))
        except (CheckpointError, TypeError, ValueError) as err:
            raise CLIError(f"cannot read the config of {resume_from}: {err}") from None
        changed = sorted(set(overrides) - _RESUMABLE_CHANGES)
        reshaped = [path for path in changed if path[0] in _SHAPE_FIELDS]
        if reshaped:
            names = ", ".join("--" + "-".join(path).replace("_", "-") for path in reshaped)
            raise CLIError(
                f"--resume cannot change {names}: the checkpoints of {args.run_dir} hold a "
                "model of the saved shape; start a new run (another --run-dir) instead"
            )
        if changed:
            names = ", ".join(".".join(path) for path in changed)
            print(f"warning: resuming with changed config fields: {names}", file=sys.stderr)
    else:
        # the rl preset adapts its action format to --source (the others keep their own)
        source = overrides.get(("source",)) if args.preset == "rl" else None
        try:
            base = cls.preset(args.preset, source=source) if args.preset is not None else cls()
        except ValueError as err:
            parser.error(f"--preset {args.preset} --source {source}: {err}")
    try:
        return apply_overrides(base, overrides), resume_from
    except (TypeError, ValueError) as err:
        parser.error(f"invalid training config: {err}")


def resolve_run_settings(
    args: argparse.Namespace, resume_from: Path | None
) -> dict[str, int | None]:
    """``checkpoint_every``, ``keep_checkpoints`` and ``eval_every`` (None: off): the flags
    given, else the resumed checkpoint's saved settings, else the defaults."""
    from jaxarc.agents.run.checkpoint import verify_checkpoint

    saved = {}
    if resume_from is not None:
        saved = verify_checkpoint(resume_from).get("run_options") or {}
    settings = {}
    for name, default in RUN_SETTING_DEFAULTS.items():
        given = getattr(args, name)
        if given is not None:
            settings[name] = None if name == "eval_every" and given == 0 else given
        else:
            settings[name] = saved.get(name, default)
    return settings


@contextlib.contextmanager
def _one_line_warnings():
    """Checkpoint warnings printed as ``jaxarc: warning: ...`` (one line, no source line)."""

    from jaxarc.agents.run.checkpoint import CheckpointWarning

    default_show = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, CheckpointWarning):
            print(f"jaxarc: warning: {message}", file=sys.stderr)
        else:
            default_show(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def check_task_source(config: Any) -> None:
    """Load the run's task source as the run will (the source resolves, every grid fits the
    canvas); :class:`CLIError` naming ``--source`` and ``--canvas`` otherwise."""
    from jaxarc.agents.grpo.train import load_task_source

    try:
        load_task_source(config)
    except (ValueError, OSError, ModuleNotFoundError) as err:  # TaskFormatError is a ValueError
        raise CLIError(
            f"cannot use --source {config.source!r} with --canvas {config.canvas}: {err}"
        ) from None


def run_train(
    args: argparse.Namespace, specs: list[FlagSpec], parser: argparse.ArgumentParser
) -> int:
    with _one_line_warnings():
        return _run_train(args, specs, parser)


def _run_train(
    args: argparse.Namespace, specs: list[FlagSpec], parser: argparse.ArgumentParser
) -> int:
    if not specs:
        raise CLIError("the trainer (jaxarc.agents.grpo.config) is not available in this install")
    config, resume_from = resolve_train_config(args, specs, parser)
    if args.resume and resume_from is None:
        print(f"note: no checkpoint in {args.run_dir}; starting a new run", file=sys.stderr)
    from jaxarc.agents.run.checkpoint import CheckpointError, CheckpointWarning

    try:
        settings = resolve_run_settings(args, resume_from)
    except CheckpointError as err:
        raise CLIError(f"cannot read the run settings of {resume_from}: {err}") from None
    # jax.distributed must start before any JAX work, the source check's included
    primary = args.dry_run or _join_distributed(args)
    check_task_source(config)  # the run would fail at start: say so before, dry run or not
    if not args.resume:  # ... as it would on a run directory that already holds checkpoints
        from jaxarc.agents.run.checkpoint import latest_checkpoint

        existing = latest_checkpoint(args.run_dir / "checkpoints")
        if existing is not None:
            raise CLIError(
                f"{args.run_dir} already holds checkpoints (newest {existing.name}); pass "
                "--resume to continue that run or choose another --run-dir"
            )
    if args.dry_run:
        print(describe_config(config))
        return 0
    _enable_compile_cache(args)  # only for a run that passed every check
    from jaxarc.agents.run.training_loop import NonFiniteLossError, RunOptions, run_training

    if primary:
        print(describe_config(config), flush=True)
        if resume_from is not None:
            print(f"resuming from {resume_from}", flush=True)
    options = RunOptions(
        run_dir=args.run_dir,
        resume=args.resume,
        progress=not args.no_progress,
        profile_dir=args.profile,
        tensorboard=not args.no_tensorboard,
        **settings,
    )
    try:
        with warnings.catch_warnings():  # already reported while resolving the config
            warnings.simplefilter("ignore", CheckpointWarning)
            result = run_training(config, options)
    except FileExistsError as err:
        raise CLIError(str(err)) from None
    except CheckpointError as err:  # a full disk during a save, a model that does not fit
        print(f"jaxarc: error: {err}", file=sys.stderr)
        return 1
    except NonFiniteLossError as err:
        print(f"jaxarc: error: {err}", file=sys.stderr)
        return 1
    if primary:
        last = result.records[-1] if result.records else {}
        summary = {k: v for k, v in last.items() if not k.startswith("time/")}
        print(f"final: {summary}")
        print(f"checkpoint: {result.last_checkpoint}")
        print(f"metrics: {options.metrics_path}  curve: {options.curve_path}")
        if args.profile is not None:
            print(f"profile trace: {args.profile}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    primary = _prepare_runtime(args)
    from jaxarc.agents.run.evaluate import EvaluationError, evaluate_checkpoint

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
        )
    except EvaluationError as err:
        raise CLIError(str(err)) from None
    where = args.checkpoint or Path("runs") / f"baseline_{args.baseline}"
    out = args.out or where / f"eval_{args.source.replace('/', '_')}.json"
    if primary:
        out.parent.mkdir(parents=True, exist_ok=True)
        from jaxarc.agents.run.checkpoint import write_text_atomic

        write_text_atomic(out, json.dumps(report, indent=2))  # a full disk keeps the old one
        print(eval_summary(report, args.attempts) + f"; results: {out}")
    return 0


def eval_summary(report: dict[str, Any], attempts: int) -> str:
    """One line (more for families) saying what an evaluation report measured."""
    if "families" in report:
        canvas = "x".join(str(side) for side in report["canvas"])
        lines = [
            f"{report['source']} on a {canvas} canvas (grids >= {report['min_side']} a side): "
            f"greedy success {report['solve_rate']:.3f} on {report['num_tasks']} fresh tasks"
        ]
        lines += [
            f"  {name:16s} {family['solve_rate']:.3f}  ({family['episodes']} tasks)"
            for name, family in report["families"].items()
        ]
        return "\n".join(lines)
    return (
        f"{report['source']}: solved {report['solved_tasks']}/{report['num_tasks']} tasks "
        f"(pass@{attempts} = {report['solve_rate']:.3f}); "
        f"test pairs {report['solved_pairs']}/{report['num_pairs']}"
    )
