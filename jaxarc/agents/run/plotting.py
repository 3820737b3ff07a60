"""Learning-curve PNGs drawn with matplotlib (the optional ``plot`` extra).

One panel per metric, stacked vertically, x axis = update (integer ticks) or another key
(e.g. wall-clock seconds). The panels are chosen from the records:

* success rates (metrics named ``*success*`` or ``heldout_*`` without ``similarity``) are
  drawn in percent on a fixed 0-100% axis, so curves of different runs compare at a glance;
  other metrics get matplotlib's own limits;
* a metric logged only at some updates (held-out evaluations) is drawn as points joined by
  lines; a per-update training metric as a light raw line with a trailing moving average;
* the training stages (``stage_bc`` in the records: behaviour cloning, then GRPO) are shaded,
  with a dashed line at each switch. A metric that is not a rate and is logged in several
  stages means a different thing in each (the loss is the behaviour-cloning loss in one,
  the GRPO surrogate in the other), so it gets one panel per stage, never one line;
* a panel that carries nothing is left out: a metric with no finite value, or one that is
  not a rate and never changes beyond float rounding (``kl`` without a KL term, a
  ``clip_fraction`` that stays 0);
* the per-family held-out rates (``eval_success/<family>``) share one panel;
* ``references`` (e.g. the untrained policy and the uniformly random policy) are drawn as
  horizontal lines on the held-out success panel, whose title gives the number of held-out
  tasks.

:func:`plot_run_curve` is the figure of a training run (``jaxarc train`` draws it at the end,
``benchmarks/learning_curve.py`` draws the documentation's curves with it). Install with
``pip install 'jaxarc[plot]'``; without matplotlib :func:`plot_learning_curve` raises
:class:`PlottingUnavailableError` saying so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jaxtyping import Float

FAMILY_PREFIX = "eval_success/"
FAMILY_PANEL = "held-out greedy success by family"
HELD_OUT_METRICS = ("eval_success_rate", "heldout_greedy")
# the metrics of a training run's curve (jaxarc train, benchmarks/learning_curve.py)
RUN_CURVE_METRICS = (
    "eval_success_rate",
    "success_rate",
    "mean_return",
    "loss",
    "kl",
    "clip_fraction",
    "entropy",
)
STAGE_KEY = "stage_bc"  # 1 during behaviour cloning, 0 during GRPO
STAGE_NAMES = {1: "behaviour cloning", 0: "GRPO"}
RATE_MARGIN = 3.0  # percentage points drawn beyond 0% and 100%
CONSTANT_TOLERANCE = 1e-6  # a metric that moves less than this (relative to 1) is constant
_RAW_COLOUR = "#aac8eb"
_SMOOTH_COLOUR = "#1450aa"
_STAGE_COLOURS = ("#fff2cc", "#e2f0d9", "#deebf7", "#f2dcdb")
_REFERENCE_STYLES = (("#c0392b", "--"), ("#7f7f7f", ":"), ("#8e44ad", "-."))
_LABELS = {
    "eval_success_rate": "held-out greedy success",
    "success_rate": "training success (sampled actions)",
    "heldout_greedy": "held-out greedy success",
    "heldout_sampled": "held-out sampled success",
    "mean_return": "training mean return",
}
_STAGE_LABELS = {
    ("loss", "behaviour cloning"): "behaviour-cloning loss",
    ("loss", "GRPO"): "GRPO surrogate loss",
}


class PlottingUnavailableError(ImportError):
    """matplotlib is not installed (it is the optional ``plot`` extra)."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlottingUnavailableError(
            "drawing learning curves needs matplotlib: pip install 'jaxarc[plot]' "
            "(or matplotlib itself)"
        ) from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def moving_average(values: Float[np.ndarray, " n"], window: int) -> Float[np.ndarray, " n"]:
    """Trailing mean over up to ``window`` values (same length as ``values``; NaNs skipped)."""
    out = np.empty_like(values, dtype=np.float64)
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        finite = chunk[np.isfinite(chunk)]
        out[i] = finite.mean() if finite.size else np.nan
    return out


def is_rate(name: str) -> bool:
    """Whether ``name`` is a success rate in ``[0, 1]`` (drawn in percent, 0-100%)."""
    return ("success" in name or name.startswith("heldout_")) and "similarity" not in name


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def stage_of(record: Mapping[str, Any]) -> str | None:
    """The training stage a record was logged in (``None`` when the record does not say)."""
    value = _as_float(record.get(STAGE_KEY))
    return None if math.isnan(value) else STAGE_NAMES.get(round(value), f"stage {value:g}")


@dataclasses.dataclass(frozen=True)
class StageSpan:
    """A run of consecutive records of one stage: its updates and its x extent."""

    name: str
    first_update: int
    last_update: int
    x0: float
    x1: float

    @property
    def label(self) -> str:
        return f"{self.name} (updates {self.first_update}-{self.last_update})"


def stage_spans(records: Sequence[Mapping[str, Any]], x_key: str = "update") -> list[StageSpan]:
    """The stages of ``records`` in order (records without a stage are skipped)."""
    spans: list[StageSpan] = []
    for index, record in enumerate(records):
        name = stage_of(record)
        if name is None:
            continue
        update = int(_as_float(record.get("update", index + 1)))
        x = _as_float(record.get(x_key, index + 1))
        if spans and spans[-1].name == name:
            spans[-1] = dataclasses.replace(spans[-1], last_update=update, x1=x)
        elif spans:  # the stages follow each other: this one began after the last one's end
            spans.append(StageSpan(name, spans[-1].last_update + 1, update, x, x))
        else:
            spans.append(StageSpan(name, update, update, x, x))
    return spans


@dataclasses.dataclass(frozen=True)
class Panel:
    """One panel: a metric, over the records of one ``stage`` (``None``: all records)."""

    metric: str
    stage: str | None = None

    def title(self, held_out_tasks: int | None) -> str:
        tasks = f" ({held_out_tasks} tasks)" if held_out_tasks else ""
        if self.metric == FAMILY_PANEL:
            return FAMILY_PANEL + tasks
        if self.stage is not None:
            default = f"{_LABELS.get(self.metric, self.metric)} ({self.stage})"
            return _STAGE_LABELS.get((self.metric, self.stage), default)
        label = _LABELS.get(self.metric, self.metric)
        return label + tasks if self.metric in HELD_OUT_METRICS else label

    def records(self, records: Sequence[Mapping[str, Any]]) -> list[bool]:
        return [self.stage is None or stage_of(r) == self.stage for r in records]


def _values(records: Sequence[Mapping[str, Any]], name: str) -> np.ndarray:
    return np.array([_as_float(r.get(name)) for r in records])


def _carries_something(name: str, values: np.ndarray) -> bool:
    """Finite values that are a rate (0% is a result) or that change by more than float
    rounding (a KL estimate without a KL term is 0 give or take 1e-9)."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return False
    scale = max(1.0, float(np.abs(finite).max()))
    return is_rate(name) or finite.size == 1 or bool(np.ptp(finite) > CONSTANT_TOLERANCE * scale)


def choose_panels(records: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> list[Panel]:
    """The panels worth drawing for ``metrics`` of ``records`` (see the module docstring),
    then one for the per-family held-out rates when the records hold them."""
    panels = []
    for name in metrics:
        values = _values(records, name)
        stages = list(
            dict.fromkeys(
                stage_of(r) for r, v in zip(records, values, strict=True) if np.isfinite(v)
            )
        )
        split = not is_rate(name) and len(stages) > 1 and None not in stages
        for panel in [Panel(name, s) for s in stages] if split else [Panel(name)]:
            if _carries_something(name, values[panel.records(records)]):
                panels.append(panel)
    families = sorted({k for r in records for k in r if k.startswith(FAMILY_PREFIX)})
    if any(np.isfinite(_values(records, f)).any() for f in families):
        panels.append(Panel(FAMILY_PANEL))
    return panels


def plot_learning_curve(
    records: Sequence[Mapping[str, Any]],
    path: str | Path,
    metrics: Sequence[str],
    *,
    x_key: str = "update",
    window: int = 10,
    title: str | None = None,
    references: Mapping[str, float] | None = None,
    held_out_tasks: int | None = None,
) -> Path:
    """Draw ``metrics`` of ``records`` (e.g. :func:`~jaxarc.agents.run.metrics_log.read_metrics`)
    against ``x_key`` into a PNG at ``path`` (see :func:`draw_learning_curve`)."""
    figure = draw_learning_curve(
        records,
        metrics,
        x_key=x_key,
        window=window,
        title=title,
        references=references,
        held_out_tasks=held_out_tasks,
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100)
    _pyplot().close(figure)
    return path


def plot_run_curve(
    records: Sequence[Mapping[str, Any]],
    path: str | Path,
    *,
    title: str | None = None,
    references: Mapping[str, float] | None = None,
    held_out_tasks: int | None = None,
) -> Path:
    """The learning curve of a training run: :data:`RUN_CURVE_METRICS` against the update."""
    return plot_learning_curve(
        records,
        path,
        RUN_CURVE_METRICS,
        title=title,
        references=references,
        held_out_tasks=held_out_tasks,
    )


def _draw_series(
    axis: Any,
    xs: np.ndarray,
    ys: np.ndarray,
    scale: float,
    window: int,
    *,
    points: bool,
    by_update: bool,
) -> None:
    """``points``: measurements at some updates (joined points); otherwise a per-update
    metric (raw line and moving average) unless it was logged at few of the updates."""
    keep = np.isfinite(ys)
    px, py = xs[keep], ys[keep]
    logged = px.max() - px.min() + 1 if by_update and len(px) else len(xs)
    sparse = len(px) < 0.5 * logged  # logged at some updates only
    if points or sparse or window <= 1:
        axis.plot(px, scale * py, marker="o", markersize=3, color=_SMOOTH_COLOUR)
    else:
        axis.plot(px, scale * py, color=_RAW_COLOUR, linewidth=1)
        axis.plot(px, scale * moving_average(py, window), color=_SMOOTH_COLOUR)


def _draw_references(axis: Any, references: Mapping[str, float]) -> None:
    for (name, value), (colour, style) in zip(
        references.items(), _REFERENCE_STYLES * len(references), strict=False
    ):
        axis.axhline(
            100 * value, color=colour, linestyle=style, linewidth=1, label=f"{name}: {value:.1%}"
        )


def _draw_stages(axes: Sequence[Any], spans: Sequence[StageSpan], by_update: bool) -> None:
    """Shade each stage in every panel and mark every switch with a dashed line (with x =
    update, half an update after a stage's last one); the top panel's legend names the
    stages and their updates."""
    edges = [spans[0].x0 - 0.5]
    for before, after in zip(spans, spans[1:], strict=False):
        edges.append(before.x1 + 0.5 if by_update else (before.x1 + after.x0) / 2)
    edges.append(spans[-1].x1 + 0.5)
    for index, span in enumerate(spans):
        previous = spans[index - 1] if index else None
        left, right = edges[index], edges[index + 1]
        colour = _STAGE_COLOURS[index % len(_STAGE_COLOURS)]
        for number, axis in enumerate(axes):
            label = None if number else span.label  # named once, in the top panel's legend
            axis.axvspan(left, right, color=colour, zorder=0, label=label)
            if previous is not None:
                axis.axvline(left, color="#555555", linestyle="--", linewidth=1, zorder=1)


def draw_learning_curve(
    records: Sequence[Mapping[str, Any]],
    metrics: Sequence[str],
    *,
    x_key: str = "update",
    window: int = 10,
    title: str | None = None,
    references: Mapping[str, float] | None = None,
    held_out_tasks: int | None = None,
) -> Any:
    """The matplotlib figure of :func:`plot_learning_curve`: the panels of
    :func:`choose_panels`, the stages shaded, ``references`` (name -> success rate) drawn on
    the held-out success panel, whose title gives ``held_out_tasks``."""
    if not records:
        raise ValueError("no records to plot")
    panels = choose_panels(records, metrics)
    if not panels:
        raise ValueError(f"none of the metrics {list(metrics)} has a value to draw")
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    xs = np.array([_as_float(r.get(x_key, i + 1)) for i, r in enumerate(records)])
    figure, axes = plt.subplots(
        len(panels),
        1,
        figsize=(8, 2.4 * len(panels)),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    spans = stage_spans(records, x_key)
    if len(spans) > 1:
        _draw_stages(axes[:, 0], spans, x_key == "update")
    for axis, panel in zip(axes[:, 0], panels, strict=True):
        rate = panel.metric == FAMILY_PANEL or is_rate(panel.metric)
        if panel.metric == FAMILY_PANEL:
            for family in sorted({k for r in records for k in r if k.startswith(FAMILY_PREFIX)}):
                fy = _values(records, family)
                keep = np.isfinite(fy)
                label = family.removeprefix(FAMILY_PREFIX)
                axis.plot(xs[keep], 100 * fy[keep], marker="o", markersize=3, label=label)
        else:
            chosen = np.array(panel.records(records))
            ys = _values(records, panel.metric)
            held_out = panel.metric in HELD_OUT_METRICS
            scale = 100.0 if rate else 1.0
            _draw_series(
                axis,
                xs[chosen],
                ys[chosen],
                scale,
                window,
                points=held_out,
                by_update=x_key == "update",
            )
            if references and held_out:
                _draw_references(axis, references)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        axis.set_title(panel.title(held_out_tasks), fontsize=9, loc="left")
        if rate:  # 0-100% (a little margin keeps a curve at 0% or 100% off the frame)
            axis.set_ylim(-RATE_MARGIN, 100 + RATE_MARGIN)
            axis.set_yticks(range(0, 101, 20))
            axis.yaxis.set_major_formatter(PercentFormatter(100))
        axis.grid(True, color="#e0e0e0")
    bottom = axes[-1, 0]
    bottom.set_xlabel(x_key)
    if x_key == "update":
        bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    if title:
        figure.suptitle(title, fontsize=10)
    return figure
