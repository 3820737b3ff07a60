"""On-disk cache of parsed task banks, keyed by a hash of the source files' contents.

A cache entry is one compressed ``.npz`` (padding compresses ~70x) holding the padded host
arrays, the task ids and the skipped-task list. The key hashes the loader version, the
canvas, the options and every source file's bytes, so editing a task file (or upgrading
the loader) misses the cache. Entries are written to a temporary file and moved into place
with ``os.replace``, so a reader never sees a half-written file. The cache root is
``$JAXARC_CACHE_DIR`` when set, else the platform's user cache directory (``platformdirs``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from jaxarc.data.bank import TASK_ARRAY_FIELDS
from jaxarc.data.errors import LoadReport, SkippedTask

CACHE_ENV_VAR = "JAXARC_CACHE_DIR"
LOADER_VERSION = 2  # bump whenever parsing or stacking changes what a bank holds


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


def content_digest(
    key: str, arrays: Mapping[str, np.ndarray], task_ids: Sequence[str], skipped_json: str
) -> str:
    """SHA-256 over everything an entry holds (each array's dtype, shape and bytes)."""
    digest = hashlib.sha256(key.encode())
    digest.update(("\0".join(task_ids) + "\0\0" + skipped_json).encode())
    for field in TASK_ARRAY_FIELDS:
        array = np.ascontiguousarray(arrays[field])
        digest.update(f"\0{field}:{array.dtype.str}:{array.shape}\0".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


def _discard_damaged(path: Path, why: str) -> None:
    warnings.warn(
        f"damaged task-bank cache entry {path} ({why}): deleted, the source is parsed again",
        stacklevel=4,
    )
    with contextlib.suppress(OSError):  # if it cannot be deleted, the rebuilt entry replaces it
        path.unlink()


def read_cached_bank(
    key: str,
) -> tuple[dict[str, np.ndarray], list[str], tuple[SkippedTask, ...]] | None:
    """The cached arrays, ids and skipped tasks for ``key``; ``None`` on a miss.

    An entry that cannot be read, lacks a field, or fails its content hash is damaged: it is
    deleted with a warning and counts as a miss (the caller parses the source and rewrites it).
    An entry of another key (a 128-bit prefix collision) is a plain miss.
    """
    path = cache_path(key)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            stored_key = str(data["key"])
            if stored_key != key:
                return None
            arrays = {field: data[field] for field in TASK_ARRAY_FIELDS}
            task_ids = [str(i) for i in data["task_ids"].tolist()]
            skipped_json = str(data["skipped"])
            stored_digest = str(data["digest"])
        skipped = LoadReport.skipped_from_json(skipped_json)
    except Exception as err:  # any failure to read (EOFError, zlib.error, BadZipFile, ...)
        _discard_damaged(path, f"{type(err).__name__}: {err}")
        return None
    if content_digest(key, arrays, task_ids, skipped_json) != stored_digest:
        _discard_damaged(path, "its contents do not match their SHA-256")
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
        skipped_json = LoadReport(source="", num_tasks=0, skipped=tuple(skipped)).skipped_to_json()
        digest = content_digest(key, arrays, [str(i) for i in task_ids], skipped_json)
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(
                handle,
                key=np.array(key),
                digest=np.array(digest),
                task_ids=np.array(list(task_ids), dtype=str),
                skipped=np.array(skipped_json),
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
    """Delete every cached bank (and temporaries a killed writer left); returns the count."""
    removed = 0
    if banks_dir().is_dir():
        for entry in banks_dir().glob("*.npz"):  # pathlib globs match .tmp-* too
            entry.unlink(missing_ok=True)
            removed += 1
    return removed
