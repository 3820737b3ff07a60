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
from jaxarc.agents.run.plotting import PlottingUnavailableError, plot_run_curve
from jaxarc.agents.run.progress import (
    COMPILING,
    announce,
    progress_bar,
    show_update,
    stage_at,
    training_stages,
)
from jaxarc.agents.run.warm_start import warm_start

HELD_OUT_METRIC = "eval_success_rate"
UNTRAINED, RANDOM = "untrained", "uniform_random"  # the references.json entries
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

    @property
    def references_path(self) -> Path:
        return Path(self.run_dir) / "references.json"


@dataclasses.dataclass
class TrainingResult:
    state: Any
    records: list[dict[str, Any]]
    last_checkpoint: Path | None
    references: dict[str, Any] | None = None  # held-out success before training


def env_steps_per_update(config: Any) -> int:
    """Environment steps one update simulates: tasks x group size x rollout steps."""
    return int(config.batch_tasks) * int(config.group_size) * int(config.max_episode_steps)


def make_held_out_evaluator(
    config: Any, mesh: Any, *, greedy: bool = True
) -> Callable[[Any], dict[str, float]]:
    """``policy -> {"eval_success_rate": rate, ...}`` on the same ``config.eval_tasks`` fresh
    episodes each time (eval mode; greedy actions, or sampled ones with ``greedy=False``),
    drawn from a key the training never uses. For a generator mixture (``gen/easy``,
    ``gen/medium``) the record also holds each family's rate as ``eval_success/<family>``."""
    from jaxarc.agents.run.distributed import replicated

    key = jax.device_put(jax.random.key(config.seed + EVAL_SEED_OFFSET), replicated(mesh))
    source = str(getattr(config, "source", ""))
    if source.startswith("gen/"):
        from jaxarc.agents.run.family_eval import family_metrics, make_family_evaluator
        from jaxarc.data.generators import generator_families

        families = generator_families(source)
        evaluate_families = make_family_evaluator(config, greedy=greedy)

        def by_family(policy: Any) -> dict[str, float]:
            result = evaluate_families(policy, key)
            extra = family_metrics(result, families) if len(families) > 1 else {}
            return {HELD_OUT_METRIC: float(result["success"]), **extra}

        return by_family
    from jaxarc.agents.grpo.train import make_evaluator

    evaluate = make_evaluator(config, greedy=greedy)
    return lambda policy: {HELD_OUT_METRIC: float(evaluate(policy, key))}


def reference_policies(
    config: Any, mesh: Any, untrained: Any, evaluate: Callable, bar: Any
) -> dict[str, Any]:
    """The held-out success of the untrained policy (greedy, the evaluator of the run) and of
    the uniformly random policy (sampled actions) on the run's held-out tasks: the
    references the learning curve draws. Both compile their evaluator (the bar says so)."""
    from jaxarc.agents.model.policy import UniformPolicy

    tasks = int(config.eval_tasks)
    bar.set_description_str(_before_training(config), refresh=True)
    untrained_result = evaluate(untrained)
    bar.set_description_str(
        f"before training: the uniform random policy on the same tasks ({COMPILING} its evaluator)",
        refresh=True,
    )
    uniform = UniformPolicy(config.selection_format, (config.canvas, config.canvas))
    random_result = make_held_out_evaluator(config, mesh, greedy=False)(uniform)
    announce(
        bar,
        f"held-out success before training, {tasks} tasks: untrained policy (greedy) "
        f"{untrained_result[HELD_OUT_METRIC]:.1%}, uniform random policy "
        f"{random_result[HELD_OUT_METRIC]:.1%}",
    )
    return {"held_out_tasks": tasks, UNTRAINED: untrained_result, RANDOM: random_result}


def _before_training(config: Any) -> str:
    return (
        f"before training: the untrained policy on {config.eval_tasks} held-out tasks "
        f"({COMPILING} the evaluator)"
    )


def curve_references(references: Mapping[str, Any] | None) -> dict[str, float]:
    """``{label: held-out success}`` of the references the learning curve draws."""
    if not references:
        return {}
    labels = {UNTRAINED: "untrained (update 0)", RANDOM: "uniform random policy"}
    return {
        label: float(references[name][HELD_OUT_METRIC])
        for name, label in labels.items()
        if HELD_OUT_METRIC in references.get(name, {})
    }


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

    With held-out evaluations on, a run that starts at update 0 first evaluates the
    untrained policy and the uniformly random policy on the held-out tasks and keeps both
    in ``run_dir/references.json`` (the learning curve draws them).

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
    if config.init_from is not None and not (options.resume and existing is not None):
        state = warm_start(state, config)  # (a resumed run's checkpoint holds its policy)
    start = 0
    if options.resume and existing is not None:
        # a damaged newest checkpoint (truncated file, sha256 mismatch) is skipped with a
        # warning: the run continues from the newest intact one
        existing = latest_intact_checkpoint(options.checkpoint_root)
    untrained = state.policy
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
    stages = training_stages(config)
    first = stage_at(stages, start + 1)
    references_due = evaluate is not None and start == 0
    bar = progress_bar(
        config.num_updates,
        start,
        options.progress and primary,
        _before_training(config)
        if references_due
        else (first.compiling() if first is not None else COMPILING),
    )
    held_out: tuple[int, float] | None = None  # (update, greedy held-out success)
    references = None
    compiled: set[str] = set()  # the stages whose update this process has compiled
    try:
        if references_due:
            references = reference_policies(config, mesh, untrained, evaluate, bar)
            compiled.add("held-out")  # the run's evaluator compiled for the untrained policy
            if primary:
                write_text_atomic(options.references_path, json.dumps(references, indent=2))
        elif primary and options.references_path.is_file():
            references = json.loads(options.references_path.read_text())
        del untrained
        for index in range(start, config.num_updates):
            stage = stage_at(stages, index + 1)
            compiling = stage is not None and stage.name not in compiled
            if compiling:
                bar.set_description_str(stage.compiling(), refresh=True)
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
            if compiling:
                compiled.add(stage.name)
                announce(bar, f"{stage.label}: first update (compile included) {seconds:.0f} s")
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
                show_update(bar, done, record, held_out, stage)
            if evaluate is not None and eval_due and not bad:
                what = f" ({COMPILING} the evaluator)" if "held-out" not in compiled else ""
                bar.set_description_str(
                    f"update {done}: held-out evaluation on {config.eval_tasks} tasks{what}",
                    refresh=True,
                )
                tic = time.perf_counter()
                record.update(evaluate(state.policy))
                record[TIME_PREFIX + "eval_seconds"] = time.perf_counter() - tic
                compiled.add("held-out")
            if log is not None:
                record = log.write(done, record)
            if bad:
                raise _non_finite_error(done, bad, last_checkpoint)
            if HELD_OUT_METRIC in record:
                held_out = (done, float(record[HELD_OUT_METRIC]))
                show_update(bar, done, record, held_out, stage)
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
            draw_run_curve(config, records, references, options.curve_path)
    return TrainingResult(state, records, last_checkpoint, references)


def draw_run_curve(
    config: Any, records: list[dict[str, Any]], references: Mapping[str, Any] | None, path: Path
) -> None:
    """The run's learning curve (a warning, not an error, without matplotlib)."""
    source = getattr(config, "source", "training")
    try:
        plot_run_curve(
            records,
            path,
            title=f"jaxarc train: {source}, {len(records)} updates, seed {config.seed}",
            references=curve_references(references),
            held_out_tasks=int(config.eval_tasks),
        )
    except PlottingUnavailableError as err:  # the run itself succeeded
        print(f"warning: no learning curve drawn: {err}", file=sys.stderr)
