"""On-disk cache of parsed task banks, keyed by a hash of the source files' contents.

A cache entry is one compressed ``.npz`` (padding compresses ~70x) holding the padded host
arrays, the task ids and the skipped-task list. The key hashes the loader version, the
canvas, the options and every source file's bytes, so editing a task file (or upgrading
the loader) misses the cache. Entries are written to a temporary file and moved into place
with ``os.replace``, so a reader never sees a half-written file. The cache root is
``$JAXARC_CACHE_DIR`` when set, else the platform's user cache directory (``platformdirs``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from jaxarc.data.bank import TASK_ARRAY_FIELDS
from jaxarc.data.errors import LoadReport, SkippedTask

CACHE_ENV_VAR = "JAXARC_CACHE_DIR"
LOADER_VERSION = 1  # bump whenever parsing or stacking changes what a bank holds


def cache_root() -> Path:
    """The jaxarc cache directory (``$JAXARC_CACHE_DIR`` or the user cache dir)."""
    override = os.environ.get(CACHE_ENV_VAR)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("jaxarc"))


def banks_dir() -> Path:
    return cache_root() / "banks"


def bank_cache_key(
    kind: str,
    canvas_shape: tuple[int, int],
    skip_invalid: bool,
    contents: Iterable[tuple[str, bytes]],
) -> str:
    """Hex digest over the loader version, options and ``(label, file bytes)`` pairs."""
    digest = hashlib.sha256()
    header = f"jaxarc-bank v{LOADER_VERSION} {kind} canvas={canvas_shape} skip={skip_invalid}"
    digest.update(header.encode())
    for label, data in contents:
        digest.update(b"\0" + label.encode() + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def cache_path(key: str) -> Path:
    return banks_dir() / f"{key[:32]}.npz"


def read_cached_bank(
    key: str,
) -> tuple[dict[str, np.ndarray], list[str], tuple[SkippedTask, ...]] | None:
    """The cached arrays, ids and skipped tasks for ``key``; ``None`` on a miss.

    An unreadable or mismatched entry counts as a miss (it is rewritten on save).
    """
    path = cache_path(key)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                return None
            arrays = {field: data[field] for field in TASK_ARRAY_FIELDS}
            task_ids = data["task_ids"].tolist()
            skipped = LoadReport.skipped_from_json(str(data["skipped"]))
    except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile):
        return None
    return arrays, task_ids, skipped


def write_cached_bank(
    key: str,
    arrays: Mapping[str, np.ndarray],
    task_ids: Sequence[str],
    skipped: Sequence[SkippedTask],
) -> Path | None:
    """Write a cache entry atomically; returns its path, or ``None`` (with a warning) on failure."""
    path = cache_path(key)
    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
        report = LoadReport(source="", num_tasks=0, skipped=tuple(skipped))
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(
                handle,
                key=np.array(key),
                task_ids=np.array(list(task_ids), dtype=str),
                skipped=np.array(report.skipped_to_json()),
                **{field: arrays[field] for field in TASK_ARRAY_FIELDS},
            )
        os.replace(tmp_name, path)
        return path
    except OSError as err:
        if tmp_name is not None and os.path.exists(tmp_name):
            os.unlink(tmp_name)
        warnings.warn(f"could not write the task-bank cache {path}: {err}", stacklevel=3)
        return None


def clear_bank_cache() -> int:
    """Delete every cached bank; returns how many files were removed."""
    removed = 0
    if banks_dir().is_dir():
        for entry in banks_dir().glob("*.npz"):
            entry.unlink()
            removed += 1
    return removed
