"""What a training run shows while it runs: its stages, its compiles and each update's metrics.

The progress bar names the stage it is in (``behaviour cloning (updates 1-80), update 12``,
then ``GRPO (updates 81-130), update 93``), says when a call is compiling (the first update
of every stage, the first held-out evaluation: each compiles its own program, the GRPO
update for a minute or more on two CPU cores) and prints one line when that compile is done.
Each update is drawn with its own metrics: the postfix is set before the count moves.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Mapping
from typing import Any

from jaxarc.agents.run.metrics_log import TIME_PREFIX
from jaxarc.agents.run.plotting import STAGE_NAMES

# progress-bar label -> metric names the trainer may use for it (first present wins). The
# training success is over *sampled* actions on the update's own (training) tasks; the
# held-out one is *greedy* on fresh tasks, measured only every ``eval_every`` updates, so
# the bar says at which update it was measured.
PROGRESS_METRICS: dict[str, tuple[str, ...]] = {
    "train sampled succ": ("success_rate",),
    "return": ("mean_return", "return"),
    "kl": ("kl",),
    "clip": ("clip_fraction",),
    "bc op acc": ("bc_operation_accuracy",),
}
RATE_LABELS = frozenset({"train sampled succ", "bc op acc"})  # shown in percent
COMPILING = "compiling"  # in the bar's description while a call compiles


@dataclasses.dataclass(frozen=True)
class Stage:
    """A stage of a run: updates ``first`` to ``last`` (1-based, inclusive)."""

    name: str
    first: int
    last: int

    @property
    def label(self) -> str:
        return f"{self.name} (updates {self.first}-{self.last})"

    def compiling(self) -> str:
        return f"{self.label}: {COMPILING} the {self.name} update"


def training_stages(config: Any) -> tuple[Stage, ...]:
    """The stages of a run of ``config``: ``bc_updates`` of behaviour cloning, then GRPO."""
    total = int(config.num_updates)
    cloned = min(int(getattr(config, "bc_updates", 0) or 0), total)
    stages = [Stage(STAGE_NAMES[1], 1, cloned)] if cloned else []
    if cloned < total:
        stages.append(Stage(STAGE_NAMES[0], cloned + 1, total))
    return tuple(stages)


def stage_at(stages: tuple[Stage, ...], update: int) -> Stage | None:
    """The stage update number ``update`` belongs to."""
    return next((s for s in stages if s.first <= update <= s.last), None)


def progress_bar(total: int, initial: int, enabled: bool, description: str) -> Any:
    from tqdm.auto import tqdm

    # mininterval=0: every update is drawn with its own metrics (updates take >= ~0.1 s)
    return tqdm(
        total=total,
        initial=initial,
        disable=not enabled,
        unit="upd",
        dynamic_ncols=True,
        mininterval=0,
        desc=description,
    )


def announce(bar: Any, line: str) -> None:
    """Print ``line`` above the bar (nothing when the bar is off: ``--no-progress``)."""
    if not bar.disable:
        bar.write(line, file=sys.stderr)


def _percent(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def _first_present(metrics: Mapping[str, Any], names: tuple[str, ...]) -> Any | None:
    return next((metrics[n] for n in names if n in metrics), None)


def progress_postfix(
    record: Mapping[str, Any], held_out: tuple[int, float] | None, steps_per_second: float
) -> dict[str, str]:
    """The bar's labelled metrics for one update's ``record``; ``held_out`` is the newest
    ``(update, greedy held-out success)`` so far (shown with the update that measured it)."""
    postfix = {
        label: _percent(value) if label in RATE_LABELS else f"{value:.3g}"
        for label, names in PROGRESS_METRICS.items()
        if (value := _first_present(record, names)) is not None
    }
    if held_out is not None:
        postfix[f"held-out greedy succ@{held_out[0]}"] = _percent(held_out[1])
    return postfix | {"steps/s": f"{steps_per_second:.3g}"}


def show_update(
    bar: Any,
    done: int,
    record: Mapping[str, Any],
    held_out: tuple[int, float] | None,
    stage: Stage | None = None,
) -> None:
    """Draw update ``done`` of ``stage`` with its own metrics: the postfix is set *before*
    the count moves, so the bar never shows one update's metrics under another number."""
    steps = float(record.get(TIME_PREFIX + "env_steps_per_second", math.nan))
    where = f"{stage.label}, " if stage is not None else ""
    bar.set_description_str(f"{where}update {done}", refresh=False)
    bar.set_postfix(progress_postfix(record, held_out, steps), refresh=False)
    if done > bar.n:
        bar.update(done - bar.n)
    else:
        bar.refresh()
