"""The disk cache of parsed banks: hits skip parsing, content changes miss, writes are atomic."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from jaxarc.data import bank_to_json, cache_root, clear_bank_cache, load_bank_with_report
from jaxarc.data.bank import TASK_ARRAY_FIELDS


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(path))
    return path


@pytest.fixture()
def task_dir(tmp_path, miniarc_dir):
    """A private copy of MiniARC that tests may edit."""
    copy = tmp_path / "miniarc"
    shutil.copytree(miniarc_dir, copy)
    return copy


def _entries(cache_dir):
    return sorted((cache_dir / "banks").glob("*.npz"))


def _same_arrays(a, b) -> None:
    for field in TASK_ARRAY_FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field)))
    assert a.task_ids == b.task_ids


def test_cache_root_follows_the_environment(cache_dir):
    assert cache_root() == cache_dir


def test_second_load_is_a_cache_hit_without_parsing(cache_dir, task_dir):
    first, report1 = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert not report1.from_cache and report1.files_parsed == 149
    (entry,) = _entries(cache_dir)
    assert report1.cache_path == str(entry)
    mtime = entry.stat().st_mtime_ns

    second, report2 = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert report2.from_cache and report2.files_parsed == 0 and report2.cache_path == str(entry)
    assert entry.stat().st_mtime_ns == mtime  # read, not rewritten
    assert _entries(cache_dir) == [entry]
    _same_arrays(first, second)
    assert second.name == str(task_dir)


def test_editing_a_task_file_misses_the_cache(cache_dir, task_dir):
    first, _ = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    task_id = first.task_ids[0]
    path = task_dir / f"{task_id}.json"
    task = json.loads(path.read_text())
    task["train"][0]["input"] = [[7]]
    path.write_text(json.dumps(task))

    second, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert not report.from_cache and report.files_parsed == 149
    assert bank_to_json(second)[task_id]["train"][0]["input"] == [[7]]
    assert len(_entries(cache_dir)) == 2


def test_canvas_and_options_are_part_of_the_key(cache_dir, task_dir):
    load_bank_with_report(task_dir, canvas_shape=(5, 5))
    bigger, report = load_bank_with_report(task_dir, canvas_shape=(6, 7))
    assert not report.from_cache and bigger.canvas_shape == (6, 7)
    _, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), skip_invalid=True)
    assert not report.from_cache
    assert len(_entries(cache_dir)) == 3


def test_a_corrupt_entry_is_rebuilt(cache_dir, task_dir):
    first, _ = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    (entry,) = _entries(cache_dir)
    entry.write_bytes(b"not an npz file")
    with pytest.warns(
        UserWarning, match=f"damaged task-bank cache entry {re.escape(str(entry))}.*deleted"
    ):
        second, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert not report.from_cache and report.files_parsed == 149
    _same_arrays(first, second)
    third, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert report.from_cache


def test_writes_leave_no_temporary_files(cache_dir, task_dir):
    load_bank_with_report(task_dir, canvas_shape=(5, 5))
    leftovers = [p.name for p in (cache_dir / "banks").iterdir() if p.suffix != ".npz"]
    assert leftovers == []
    assert not any(p.name.startswith(".tmp-") for p in (cache_dir / "banks").iterdir())


def test_use_cache_false_neither_reads_nor_writes(cache_dir, task_dir):
    _, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), use_cache=False)
    assert report.cache_path is None
    assert not (cache_dir / "banks").exists() or _entries(cache_dir) == []
    load_bank_with_report(task_dir, canvas_shape=(5, 5))
    _, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), use_cache=False)
    assert not report.from_cache and report.files_parsed == 149


def test_clear_bank_cache(cache_dir, task_dir):
    load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert clear_bank_cache() == 1
    assert _entries(cache_dir) == []


def test_unwritable_cache_warns_and_still_loads(tmp_path, monkeypatch, task_dir):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(blocker))
    with pytest.warns(UserWarning, match="could not write the task-bank cache"):
        bank, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert bank.num_tasks == 149 and report.cache_path is None
