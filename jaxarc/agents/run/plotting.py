"""Learning-curve PNGs drawn with matplotlib (the optional ``plot`` extra).

One panel per metric, stacked vertically, x axis = update (integer ticks) or another key
(e.g. wall-clock seconds). Success rates (metrics named ``*success*`` or ``heldout_*``
without ``similarity``) are drawn in percent on a fixed 0-100% axis, so curves of different
runs compare at a glance; other metrics get matplotlib's own limits. Metrics logged only at
some updates (held-out evaluations) are drawn as points joined by lines; per-update training
metrics as a light raw line with a trailing moving average on top. The per-family held-out
rates (``eval_success/<family>``) share one panel, one line per family.

Install with ``pip install 'jaxarc[plot]'``; without matplotlib :func:`plot_learning_curve`
raises :class:`PlottingUnavailableError` saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

FAMILY_PREFIX = "eval_success/"
FAMILY_PANEL = "held-out greedy success by family"
RATE_MARGIN = 3.0  # percentage points drawn beyond 0% and 100%
_RAW_COLOUR = "#aac8eb"
_SMOOTH_COLOUR = "#1450aa"
_LABELS = {
    "eval_success_rate": "held-out greedy success",
    "success_rate": "training success (sampled actions)",
    "heldout_greedy": "held-out greedy success",
    "heldout_sampled": "held-out sampled success",
    "mean_return": "training mean return",
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


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
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


def _series(records: Sequence[Mapping[str, Any]], name: str, xs: np.ndarray):
    """The finite ``(x, y)`` points of ``name`` (records without it are skipped)."""
    ys = np.array([_as_float(r.get(name)) for r in records])
    keep = np.isfinite(ys)
    return xs[keep], ys[keep]


def _panels(records: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> list[str]:
    present = [m for m in metrics if any(m in r for r in records)]
    if any(k.startswith(FAMILY_PREFIX) for r in records for k in r):
        present.append(FAMILY_PANEL)
    return present


def plot_learning_curve(
    records: Sequence[Mapping[str, Any]],
    path: str | Path,
    metrics: Sequence[str],
    *,
    x_key: str = "update",
    window: int = 10,
    title: str | None = None,
) -> Path:
    """Draw ``metrics`` of ``records`` (e.g. :func:`~jaxarc.agents.run.metrics_log.read_metrics`)
    against ``x_key`` into a PNG at ``path`` (see :func:`draw_learning_curve`)."""
    figure = draw_learning_curve(records, metrics, x_key=x_key, window=window, title=title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100)
    _pyplot().close(figure)
    return path


def draw_learning_curve(
    records: Sequence[Mapping[str, Any]],
    metrics: Sequence[str],
    *,
    x_key: str = "update",
    window: int = 10,
    title: str | None = None,
) -> Any:
    """The matplotlib figure of :func:`plot_learning_curve`: one panel per metric present
    (metrics missing from every record are skipped), then one for the per-family held-out
    rates when the records hold them."""
    if not records:
        raise ValueError("no records to plot")
    panels = _panels(records, metrics)
    if not panels:
        raise ValueError(f"none of the metrics {list(metrics)} appear in the records")
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
    for axis, name in zip(axes[:, 0], panels, strict=True):
        if name == FAMILY_PANEL:
            families = sorted({k for r in records for k in r if k.startswith(FAMILY_PREFIX)})
            for family in families:
                fx, fy = _series(records, family, xs)
                label = family.removeprefix(FAMILY_PREFIX)
                axis.plot(fx, 100 * fy, marker="o", markersize=3, label=label)
            axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
            rate = True
        else:
            px, py = _series(records, name, xs)
            rate = is_rate(name)
            scale = 100.0 if rate else 1.0
            sparse = len(px) < 0.5 * len(records)  # logged at some updates only
            if sparse or window <= 1:
                axis.plot(px, scale * py, marker="o", markersize=3, color=_SMOOTH_COLOUR)
            else:
                axis.plot(px, scale * py, color=_RAW_COLOUR, linewidth=1)
                axis.plot(px, scale * moving_average(py, window), color=_SMOOTH_COLOUR)
            if not len(px):
                axis.text(0.5, 0.5, "no finite values", transform=axis.transAxes, ha="center")
        axis.set_title(_LABELS.get(name, name), fontsize=9, loc="left")
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
