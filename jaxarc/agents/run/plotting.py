"""Learning-curve PNGs drawn with Pillow (no plotting library needed).

One panel per metric, stacked vertically, x axis = update (or env steps), with the raw
values in a light colour and a moving average on top.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

_PANEL_SIZE = (720, 240)
_MARGIN_LEFT, _MARGIN_RIGHT, _MARGIN_TOP, _MARGIN_BOTTOM = 64, 16, 28, 30
_RAW_COLOUR = (170, 200, 235)
_SMOOTH_COLOUR = (20, 80, 170)
_AXIS_COLOUR = (60, 60, 60)
_GRID_COLOUR = (225, 225, 225)


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing mean over up to ``window`` values (same length as ``values``; NaNs skipped)."""
    out = np.empty_like(values, dtype=np.float64)
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        finite = chunk[np.isfinite(chunk)]
        out[i] = finite.mean() if finite.size else np.nan
    return out


def _format_tick(value: float) -> str:
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.3g}"
    return f"{value:.1e}"


def _draw_panel(
    draw: ImageDraw.ImageDraw,
    origin_y: int,
    xs: np.ndarray,
    ys: np.ndarray,
    title: str,
    x_label: str,
    window: int,
    font: Any,
) -> None:
    width, height = _PANEL_SIZE
    left, right = _MARGIN_LEFT, width - _MARGIN_RIGHT
    top, bottom = origin_y + _MARGIN_TOP, origin_y + height - _MARGIN_BOTTOM
    draw.text((left, origin_y + 6), title, fill=_AXIS_COLOUR, font=font)
    finite = np.isfinite(ys)
    if not finite.any():
        draw.text((left + 10, (top + bottom) // 2), "no finite values", fill=_AXIS_COLOUR)
        return
    y_low, y_high = float(ys[finite].min()), float(ys[finite].max())
    if math.isclose(y_low, y_high):
        y_low, y_high = y_low - 0.5, y_high + 0.5
    x_low, x_high = float(xs.min()), float(xs.max())
    if math.isclose(x_low, x_high):
        x_low, x_high = x_low - 0.5, x_high + 0.5

    def to_pixel(x: float, y: float) -> tuple[float, float]:
        px = left + (x - x_low) / (x_high - x_low) * (right - left)
        py = bottom - (y - y_low) / (y_high - y_low) * (bottom - top)
        return px, py

    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        y_value = y_low + fraction * (y_high - y_low)
        _, py = to_pixel(x_low, y_value)
        draw.line([(left, py), (right, py)], fill=_GRID_COLOUR)
        draw.text((4, py - 6), _format_tick(y_value), fill=_AXIS_COLOUR, font=font)
    for fraction in (0.0, 0.5, 1.0):
        x_value = x_low + fraction * (x_high - x_low)
        px, _ = to_pixel(x_value, y_low)
        draw.text((px - 12, bottom + 4), _format_tick(x_value), fill=_AXIS_COLOUR, font=font)
    draw.text((right - 60, bottom + 14), x_label, fill=_AXIS_COLOUR, font=font)
    draw.rectangle([(left, top), (right, bottom)], outline=_AXIS_COLOUR)

    def polyline(values: np.ndarray, colour: tuple[int, int, int], line_width: int) -> None:
        points = [to_pixel(x, y) for x, y in zip(xs, values, strict=True) if np.isfinite(y)]
        if len(points) == 1:
            px, py = points[0]
            draw.ellipse([(px - 2, py - 2), (px + 2, py + 2)], fill=colour)
        elif points:
            draw.line(points, fill=colour, width=line_width)

    polyline(ys, _RAW_COLOUR, 1)
    polyline(moving_average(ys, window), _SMOOTH_COLOUR, 2)


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
    against ``x_key`` into a PNG at ``path``; metrics missing from every record are skipped."""
    if not records:
        raise ValueError("no records to plot")
    present = [m for m in metrics if any(m in r for r in records)]
    if not present:
        raise ValueError(f"none of the metrics {list(metrics)} appear in the records")
    xs = np.array([float(r.get(x_key, i + 1)) for i, r in enumerate(records)])
    width, height = _PANEL_SIZE
    header = 24 if title else 0
    image = Image.new("RGB", (width, header + height * len(present)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    if title:
        draw.text((_MARGIN_LEFT, 6), title, fill=(0, 0, 0), font=font)
    for i, name in enumerate(present):
        ys = np.array([_as_float(r.get(name)) for r in records])
        _draw_panel(draw, header + i * height, xs, ys, name, x_key, window, font)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
