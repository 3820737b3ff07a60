"""Training metrics on disk: one JSON object per update appended to a JSONL file.

Every record has an integer ``update`` (1-based: the number of updates done) and plain
Python numbers; keys starting with ``time/`` hold wall-clock measurements, which differ
from run to run (:func:`deterministic_part` drops them). TensorBoard scalars are written
too when ``tensorboardX`` or ``torch.utils.tensorboard`` is importable (never required).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

TIME_PREFIX = "time/"


def to_python_scalars(metrics: Mapping[str, Any]) -> dict[str, float | int | bool]:
    """Scalar arrays (device or host) as Python numbers; one transfer for the whole dict."""
    host = jax.device_get(dict(metrics))
    out: dict[str, float | int | bool] = {}
    for name, value in host.items():
        array = np.asarray(value)
        if array.size != 1:
            raise ValueError(f"metric {name!r} has shape {array.shape}; metrics must be scalars")
        item = array.reshape(()).item()
        out[name] = item
    return out


def deterministic_part(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` without its wall-clock (``time/...``) entries."""
    return {k: v for k, v in record.items() if not k.startswith(TIME_PREFIX)}


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """All records of a JSONL metrics file (an unterminated last line is ignored)."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a crash: nothing after it was completed either
    return records


def _json_number(value: Any) -> Any:
    """JSON has no NaN/inf: write them as strings so the file stays valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _tensorboard_writer(log_dir: Path) -> Any | None:
    try:
        from tensorboardX import SummaryWriter  # type: ignore[import-not-found]
    except ImportError:
        try:
            from torch.utils.tensorboard import SummaryWriter  # type: ignore[import-not-found]
        except ImportError:
            return None
    return SummaryWriter(str(log_dir))


class MetricsLog:
    """Appends one record per update to ``path`` (and TensorBoard when available).

    ``resume_after``: the update index the run resumes from. Records of later updates (made
    by the interrupted run after its last checkpoint) are dropped, so that the file matches
    an uninterrupted run's. ``None`` starts a new file.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        resume_after: int | None = None,
        tensorboard_dir: str | Path | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [] if resume_after is None else read_metrics(self.path)
        kept = [r for r in kept if int(r["update"]) <= (resume_after or 0)]
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text("".join(json.dumps(r) + "\n" for r in kept))
        os.replace(temp, self.path)
        self._file = open(self.path, "a")  # noqa: SIM115 (closed in close())
        self._tensorboard = (
            _tensorboard_writer(Path(tensorboard_dir)) if tensorboard_dir is not None else None
        )

    @property
    def tensorboard_enabled(self) -> bool:
        return self._tensorboard is not None

    def write(self, update: int, metrics: Mapping[str, Any]) -> dict[str, Any]:
        """Append the record for ``update`` (metrics may be arrays); returns the record."""
        record: dict[str, Any] = {"update": int(update), **to_python_scalars(metrics)}
        line = json.dumps({k: _json_number(v) for k, v in record.items()})
        self._file.write(line + "\n")
        self._file.flush()
        if self._tensorboard is not None:
            for name, value in record.items():
                if name != "update" and isinstance(value, int | float):
                    self._tensorboard.add_scalar(name, float(value), int(update))
            self._tensorboard.flush()
        return record

    def close(self) -> None:
        self._file.close()
        if self._tensorboard is not None:
            self._tensorboard.close()

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
