"""The training driver around ``make_train``: resume, logging, checkpoints, NaN guard, profile.

``run_training(config, RunOptions(run_dir=...))`` runs ``config.num_updates`` GRPO updates
and keeps everything in ``run_dir``::

    run_dir/config.json        # the config of the run (also inside every checkpoint)
    run_dir/metrics.jsonl      # one record per update (see jaxarc.agents.run.metrics_log)
    run_dir/checkpoints/       # update_XXXXXXXX/ directories, written atomically
    run_dir/learning_curve.png # drawn at the end
    run_dir/tensorboard/       # only when a TensorBoard writer is importable

Every update is a pure function of the train state (its PRNG key and update index live in
it), so a run resumed from a checkpoint logs exactly the records an uninterrupted run would.
With several processes all run this loop; only process 0 writes files.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxarc.agents.run.checkpoint import (
    config_to_dict,
    latest_checkpoint,
    latest_intact_checkpoint,
    load_checkpoint,
    save_checkpoint,
    write_text_atomic,
)
from jaxarc.agents.run.distributed import is_primary_process, make_data_mesh
from jaxarc.agents.run.metrics_log import TIME_PREFIX, MetricsLog, to_python_scalars
from jaxarc.agents.run.plotting import PlottingUnavailableError, plot_learning_curve

# progress-bar label -> metric names the trainer may use for it (first present wins). The
# training success is over *sampled* actions on the update's own (training) tasks; the
# held-out one is *greedy* on fresh tasks, measured only every ``eval_every`` updates, so
# the bar says at which update it was measured.
PROGRESS_METRICS: dict[str, tuple[str, ...]] = {
    "train sampled succ": ("success_rate",),
    "return": ("mean_return", "return"),
    "kl": ("kl",),
    "clip": ("clip_fraction",),
}
HELD_OUT_METRIC = "eval_success_rate"
COMPILING = "compiling (first update)"
CURVE_METRICS = (
    "eval_success_rate",
    "success_rate",
    "mean_return",
    "loss",
    "kl",
    "clip_fraction",
    "entropy",
)
EVAL_SEED_OFFSET = 1_000_003  # held-out episodes: a key stream the training never uses
LOSS_METRICS = ("loss", "total_loss")
SAVED_RUN_OPTIONS = ("checkpoint_every", "keep_checkpoints", "eval_every")


class NonFiniteLossError(RuntimeError):
    """The loss or the parameters became NaN or infinite; the run stopped before saving that
    state (no checkpoint with non-finite values is ever written)."""


@eqx.filter_jit
def _all_finite(state: Any) -> jax.Array:
    """Whether every floating-point leaf of ``state`` (weights, optimiser moments) is finite."""
    leaves = jax.tree.leaves(eqx.filter(state, eqx.is_inexact_array))
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves] or [jnp.bool_(True)]))


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Where and how a run is kept (not part of the training config; no effect on results)."""

    run_dir: Path
    resume: bool = False
    checkpoint_every: int = 50
    keep_checkpoints: int | None = 3
    progress: bool = True
    profile_dir: Path | None = None
    tensorboard: bool = True
    eval_every: int | None = 25  # held-out success rate every N updates and at the end

    def __post_init__(self) -> None:
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be >= 1, got {self.checkpoint_every}")
        if self.eval_every is not None and self.eval_every < 1:
            raise ValueError(f"eval_every must be >= 1 or None, got {self.eval_every}")
        if self.keep_checkpoints is not None and self.keep_checkpoints < 1:
            raise ValueError(f"keep_checkpoints must be >= 1, got {self.keep_checkpoints}")

    def saved_settings(self) -> dict[str, int | None]:
        """The cadence settings stored in every checkpoint's meta (``run_options``), so that
        a plain resume keeps them and logs what the uninterrupted run would."""
        return {name: getattr(self, name) for name in SAVED_RUN_OPTIONS}

    @property
    def checkpoint_root(self) -> Path:
        return Path(self.run_dir) / "checkpoints"

    @property
    def metrics_path(self) -> Path:
        return Path(self.run_dir) / "metrics.jsonl"

    @property
    def curve_path(self) -> Path:
        return Path(self.run_dir) / "learning_curve.png"


@dataclasses.dataclass
class TrainingResult:
    state: Any
    records: list[dict[str, Any]]
    last_checkpoint: Path | None


def env_steps_per_update(config: Any) -> int:
    """Environment steps one update simulates: tasks x group size x rollout steps."""
    return int(config.batch_tasks) * int(config.group_size) * int(config.max_episode_steps)


def make_held_out_evaluator(config: Any, mesh: Any) -> Callable[[Any], dict[str, float]]:
    """``policy -> {"eval_success_rate": rate, ...}`` on the same ``config.eval_tasks`` fresh
    episodes each time (greedy actions, eval mode), drawn from a key the training never
    uses. For a generator mixture (``gen/easy``, ``gen/medium``) the record also holds each
    family's rate as ``eval_success/<family>``."""
    from jaxarc.agents.run.distributed import replicated

    key = jax.device_put(jax.random.key(config.seed + EVAL_SEED_OFFSET), replicated(mesh))
    source = str(getattr(config, "source", ""))
    if source.startswith("gen/"):
        from jaxarc.agents.run.family_eval import family_metrics, make_family_evaluator
        from jaxarc.data.generators import generator_families

        families = generator_families(source)
        evaluate_families = make_family_evaluator(config)

        def by_family(policy: Any) -> dict[str, float]:
            result = evaluate_families(policy, key)
            extra = family_metrics(result, families) if len(families) > 1 else {}
            return {HELD_OUT_METRIC: float(result["success"]), **extra}

        return by_family
    from jaxarc.agents.grpo.train import make_evaluator

    evaluate = make_evaluator(config, greedy=True)
    return lambda policy: {HELD_OUT_METRIC: float(evaluate(policy, key))}


def _first_present(metrics: Mapping[str, Any], names: tuple[str, ...]) -> Any | None:
    return next((metrics[n] for n in names if n in metrics), None)


def _non_finite_losses(metrics: Mapping[str, Any]) -> list[str]:
    return [
        f"loss ({name}={value})"
        for name, value in metrics.items()
        if (name in LOSS_METRICS or name.endswith("loss"))
        and isinstance(value, float)
        and not math.isfinite(value)
    ]


def _non_finite_error(update: int, bad: list[str], last_checkpoint: Path | None) -> Exception:
    where = str(last_checkpoint) if last_checkpoint else "none written yet"
    return NonFiniteLossError(
        f"update {update}: non-finite {', '.join(bad)}; training stopped without "
        f"saving this state. Last good checkpoint: {where}. Try a lower learning rate or "
        "a smaller max_grad_norm."
    )


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    # mininterval=0: every update is drawn with its own metrics (updates take >= ~0.1 s)
    return tqdm(
        total=total,
        initial=initial,
        disable=not enabled,
        unit="upd",
        dynamic_ncols=True,
        mininterval=0,
        desc=COMPILING,
    )


def progress_postfix(
    record: Mapping[str, Any], held_out: tuple[int, float] | None, steps_per_second: float
) -> dict[str, str]:
    """The bar's labelled metrics for one update's ``record``; ``held_out`` is the newest
    ``(update, greedy held-out success)`` so far (shown with the update that measured it)."""
    postfix = {
        label: f"{value:.3g}"
        for label, names in PROGRESS_METRICS.items()
        if (value := _first_present(record, names)) is not None
    }
    if held_out is not None:
        postfix[f"held-out greedy succ@{held_out[0]}"] = f"{held_out[1]:.3g}"
    return postfix | {"steps/s": f"{steps_per_second:.3g}"}


def show_update(
    bar: Any, done: int, record: Mapping[str, Any], held_out: tuple[int, float] | None
) -> None:
    """Draw update ``done`` with its own metrics: the postfix is set *before* the count
    moves, so the bar never shows one update's metrics under another update's number."""
    steps = float(record.get(TIME_PREFIX + "env_steps_per_second", math.nan))
    bar.set_description_str(f"update {done}", refresh=False)
    bar.set_postfix(progress_postfix(record, held_out, steps), refresh=False)
    if done > bar.n:
        bar.update(done - bar.n)
    else:
        bar.refresh()


def run_training(
    config: Any,
    options: RunOptions,
    *,
    make_train: Callable[..., tuple[Callable, Callable]] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> TrainingResult:
    """Train for ``config.num_updates`` updates (continuing from the newest checkpoint with
    ``options.resume``). ``make_train`` defaults to :func:`jaxarc.agents.make_train`;
    ``on_record`` is called with each update's record after its checkpoint (if any).

    Raises :class:`NonFiniteLossError` if the loss stops being finite and ``FileExistsError``
    if ``run_dir`` already holds checkpoints and ``resume`` is off.
    """
    if make_train is None:
        from jaxarc.agents.grpo.train import make_train as default_make_train

        make_train = default_make_train
    primary = is_primary_process()
    run_dir = Path(options.run_dir)
    existing = latest_checkpoint(options.checkpoint_root)
    if existing is not None and not options.resume:
        raise FileExistsError(
            f"{run_dir} already holds checkpoints (newest {existing.name}); pass --resume to "
            "continue that run or choose another --run-dir"
        )
    mesh = make_data_mesh()
    init, update = make_train(config, mesh)
    evaluate = make_held_out_evaluator(config, mesh) if options.eval_every else None
    state = init(jax.random.key(config.seed))
    start = 0
    if options.resume and existing is not None:
        # a damaged newest checkpoint (truncated file, sha256 mismatch) is skipped with a
        # warning: the run continues from the newest intact one
        existing = latest_intact_checkpoint(options.checkpoint_root)
    if options.resume and existing is not None:
        loaded = load_checkpoint(existing, state)
        state, start = loaded.state, loaded.update_index
    if primary:
        run_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(
            run_dir / "config.json", json.dumps(config_to_dict(config), indent=2, sort_keys=True)
        )
    log = (
        MetricsLog(
            options.metrics_path,
            resume_after=start if options.resume else None,
            tensorboard_dir=run_dir / "tensorboard" if options.tensorboard else None,
        )
        if primary
        else None
    )
    steps_per_update = env_steps_per_update(config)
    last_checkpoint = existing if options.resume else None
    # profile one update after the first (compiling) one, or the only one
    profile_at = min(start + 1, config.num_updates - 1)
    bar = _progress_bar(config.num_updates, start, options.progress and primary)
    held_out: tuple[int, float] | None = None  # (update, greedy held-out success)
    try:
        for index in range(start, config.num_updates):
            profiling = options.profile_dir is not None and index == profile_at
            if profiling:
                jax.profiler.start_trace(str(options.profile_dir))
            tic = time.perf_counter()
            state, metrics = update(state)
            record = to_python_scalars(metrics)  # waits for the update to finish
            seconds = time.perf_counter() - tic
            if profiling:
                jax.profiler.stop_trace()
            done = index + 1
            record["total_env_steps"] = done * steps_per_update
            record[TIME_PREFIX + "update_seconds"] = seconds
            record[TIME_PREFIX + "env_steps_per_second"] = steps_per_update / seconds
            # the loss is computed before the update changes the weights: check both
            bad = _non_finite_losses(record)
            if not bool(_all_finite(state)):
                bad.append("parameters (NaN/inf weights or optimiser state after the update)")
            eval_due = options.eval_every is not None and (
                done % options.eval_every == 0 or done == config.num_updates
            )
            if not bad:
                show_update(bar, done, record, held_out)
            if evaluate is not None and eval_due and not bad:
                # (the first evaluation compiles its own program)
                bar.set_description_str(f"update {done}: held-out evaluation", refresh=True)
                tic = time.perf_counter()
                record.update(evaluate(state.policy))
                record[TIME_PREFIX + "eval_seconds"] = time.perf_counter() - tic
            if log is not None:
                record = log.write(done, record)
            if bad:
                raise _non_finite_error(done, bad, last_checkpoint)
            if HELD_OUT_METRIC in record:
                held_out = (done, float(record[HELD_OUT_METRIC]))
                show_update(bar, done, record, held_out)
            due = done % options.checkpoint_every == 0 or done == config.num_updates
            if due and primary:
                last_checkpoint = save_checkpoint(
                    options.checkpoint_root,
                    done,
                    state,
                    config,
                    keep=options.keep_checkpoints,
                    extra_meta={"run_options": options.saved_settings()},
                )
            if on_record is not None:
                on_record(record)
    finally:
        bar.close()
        if log is not None:
            log.close()
    records = []
    if primary:
        from jaxarc.agents.run.metrics_log import read_metrics

        records = read_metrics(options.metrics_path)
        if records:
            try:
                plot_learning_curve(
                    records,
                    options.curve_path,
                    [m for m in CURVE_METRICS if any(m in r for r in records)],
                    title=f"{getattr(config, 'source', 'training')} - {len(records)} updates",
                )
            except PlottingUnavailableError as err:  # the run itself succeeded
                print(f"warning: no learning curve drawn: {err}", file=sys.stderr)
    return TrainingResult(state, records, last_checkpoint)
