"""``jaxarc train`` (GRPO training) and ``jaxarc eval`` (solve rate of a checkpoint on ARC).

Every field of :class:`jaxarc.agents.TrainConfig` is a flag (generated from the dataclass,
see :mod:`jaxarc.cli.dataclass_flags`); ``--preset`` picks the base the flags override.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from jaxarc.cli.arg_types import non_negative_int, positive_int
from jaxarc.cli.dataclass_flags import (
    FlagSpec,
    add_dataclass_flags,
    apply_overrides,
    describe_config,
    overrides_from_args,
)
from jaxarc.cli.main import CLIError
from jaxarc.cli.runtime import (
    add_runtime_flags,
    enable_compile_cache_from_args,
    join_distributed,
)

PRESETS = ("quick", "medium", "rl", "default")
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


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser(
        "train",
        help="train a GRPO agent (flags = the TrainConfig fields)",
        description="Train a GRPO agent. Every TrainConfig field is a flag; flags override "
        "--preset (or, with --resume, the resumed run's saved config).",
    )
    train.add_argument("--preset", choices=PRESETS, default=None, help="base config")
    train.add_argument("--run-dir", type=Path, default=Path("runs/train"), help="output dir")
    train.add_argument(
        "--resume",
        action="store_true",
        help="continue from the newest checkpoint, up to the run's total --num-updates (the "
        "saved one, or a larger total given here)",
    )
    train.add_argument(
        "--fresh-run-dir",
        action="store_true",
        help="if --run-dir holds a run already, start this one in the first free DIR-2, "
        "DIR-3, ... beside it (make run does this)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=positive_int,
        default=None,
        metavar="N",
        help="default 50 (with --resume: the resumed run's setting)",
    )
    train.add_argument(
        "--keep-checkpoints",
        type=positive_int,
        default=None,
        metavar="N",
        help="default 3 (with --resume: the resumed run's setting)",
    )
    train.add_argument(
        "--eval-every",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="held-out success rate (eval_tasks fresh episodes) every N updates and at the "
        "end; 0 disables (default 25; with --resume: the resumed run's setting)",
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument("--no-tensorboard", action="store_true", help="never write TensorBoard")
    train.add_argument("--profile", type=Path, default=None, metavar="DIR", help="trace dir")
    train.add_argument("--dry-run", action="store_true", help="print the config and exit")
    add_runtime_flags(train)
    config_group = train.add_argument_group("training config (TrainConfig fields)")
    specs = add_dataclass_flags(config_group, _train_config_class()())
    train.set_defaults(func=lambda args: run_train(args, specs, train))


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
        if ("num_updates",) in overrides:
            check_resumed_total(overrides[("num_updates",)], resume_from, base.num_updates)
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


def check_resumed_total(num_updates: int, resume_from: Path, saved_total: int) -> None:
    """Refuse a resumed run's ``--num-updates`` that leaves nothing to do: it is the run's
    total (the updates done count), so it must exceed the checkpoint's update index."""
    from jaxarc.agents.run.checkpoint import CheckpointError, verify_checkpoint

    try:
        done = verify_checkpoint(resume_from)["update_index"]
    except CheckpointError as err:
        raise CLIError(f"cannot read the checkpoint {resume_from}: {err}") from None
    if num_updates <= done:
        raise CLIError(
            f"--num-updates {num_updates} is the run's total, and {resume_from} is at update "
            f"{done} of {saved_total} already: pass a total above {done} (e.g. --num-updates "
            f"{done + num_updates} for {num_updates} more)"
        )


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


def check_init_from(config: Any) -> None:
    """The run ``--init-from`` names loads and fits this run; :class:`CLIError` otherwise."""
    from jaxarc.agents.run.checkpoint import CheckpointError
    from jaxarc.agents.run.warm_start import check_warm_start

    try:
        check_warm_start(config)
    except CheckpointError as err:
        raise CLIError(str(err).replace("init_from", "--init-from", 1)) from None


def run_train(
    args: argparse.Namespace, specs: list[FlagSpec], parser: argparse.ArgumentParser
) -> int:
    """``jaxarc train``: called through :func:`jaxarc.cli.main.main`, which prints warnings
    (a checkpoint that could not be read, ...) as one ``jaxarc: warning:`` line."""
    if not specs:
        raise CLIError("the trainer (jaxarc.agents.grpo.config) is not available in this install")
    if args.fresh_run_dir:
        if args.resume:
            parser.error("--fresh-run-dir starts a new run; it cannot be combined with --resume")
        chosen = fresh_run_dir(args.run_dir)
        if chosen != args.run_dir:
            print(
                f"note: {args.run_dir} holds an earlier run (continue that one with "
                f"`jaxarc train --run-dir {args.run_dir} --resume`); this run writes to {chosen}",
                file=sys.stderr,
            )
        args.run_dir = chosen
    config, resume_from = resolve_train_config(args, specs, parser)
    if args.resume and resume_from is None:
        print(f"note: no checkpoint in {args.run_dir}; starting a new run", file=sys.stderr)
    from jaxarc.agents.run.checkpoint import CheckpointError, CheckpointWarning

    try:
        settings = resolve_run_settings(args, resume_from)
    except CheckpointError as err:
        raise CLIError(f"cannot read the run settings of {resume_from}: {err}") from None
    # jax.distributed must start before any JAX work, the source check's included
    primary = args.dry_run or join_distributed(args)
    check_task_source(config)  # the run would fail at start: say so before, dry run or not
    if config.init_from is not None and resume_from is None:
        check_init_from(config)
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
    enable_compile_cache_from_args(args)  # only for a run that passed every check
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
    tic = time.perf_counter()
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
        print(run_summary(config, options, result, time.perf_counter() - tic))
        if args.profile is not None:
            print(f"profile trace: {args.profile}")
    return 0


def fresh_run_dir(run_dir: Path) -> Path:
    """``run_dir`` if it holds no run, else the first of ``run_dir-2``, ``run_dir-3``, ...
    that holds none (a run: a config, a metrics file or checkpoints)."""

    def holds_run(path: Path) -> bool:
        return any(
            (path / name).exists() for name in ("config.json", "metrics.jsonl", "checkpoints")
        )

    candidate, number = run_dir, 1
    while holds_run(candidate):
        number += 1
        candidate = run_dir.with_name(f"{run_dir.name}-{number}")
    return candidate


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def run_summary(config: Any, options: Any, result: Any, seconds: float) -> str:
    """What a finished run printed last: its held-out success (against the untrained and the
    uniform random policy) and where its files are."""
    from jaxarc.agents.run.task_progress import percent
    from jaxarc.agents.run.training_loop import HELD_OUT_METRIC, curve_references

    updates = result.records[-1]["update"] if result.records else 0
    lines = [f"done: {updates} updates in {_duration(seconds)} (compilation included)"]
    evaluated = [r for r in result.records if HELD_OUT_METRIC in r]
    if evaluated:
        last = evaluated[-1]
        before = ", ".join(
            f"{name} {percent(rate)}" for name, rate in curve_references(result.references).items()
        )
        lines.append(
            f"held-out greedy success at update {last['update']}: "
            f"{percent(last[HELD_OUT_METRIC])} of {config.eval_tasks} fresh tasks"
            + (f" (before training: {before})" if before else "")
        )
        families = [k for k in last if k.startswith("eval_success/")]
        if families:
            lines.append(
                "  by family: "
                + ", ".join(f"{k.split('/', 1)[1]} {percent(last[k])}" for k in families)
            )
    lines += [
        f"run directory: {options.run_dir}",
        f"  checkpoint: {result.last_checkpoint}",
        f"  metrics:    {options.metrics_path}",
        f"  curve:      {options.curve_path}",
    ]
    return "\n".join(lines)
