"""Damaged caches, bad solutions, hostile JSON, duplicate ids,
unreadable files, symlinks and bad canvas shapes. Each test failed before its fix."""

from __future__ import annotations

import json
import os
import struct
import sys
import warnings
import zipfile

import numpy as np
import pytest

from jaxarc.data import TaskFormatError, bank_to_json, load_bank, load_bank_with_report
from jaxarc.data.bank import TASK_ARRAY_FIELDS

TASK = {
    "train": [{"input": [[0, 1], [2, 3]], "output": [[3, 2], [1, 0]]}],
    "test": [{"input": [[1, 1]], "output": [[2, 2]]}],
}


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(path))
    return path


@pytest.fixture()
def task_dir(tmp_path, cache_dir):
    """Three small good tasks, ``a``, ``b`` and ``sub/c``."""
    root = tmp_path / "tasks"
    (root / "sub").mkdir(parents=True)
    for task_id in ("a", "b", "sub/c"):
        (root / f"{task_id}.json").write_text(json.dumps(TASK))
    return root


def _same_banks(a, b) -> None:
    for field in TASK_ARRAY_FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field)))
    assert a.task_ids == b.task_ids


def _member_data_offset(archive, name: str) -> int:
    """Where the (compressed) bytes of member ``name`` start in a zip file."""
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo(name)
    with open(archive, "rb") as handle:
        handle.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", handle.read(4))
    return info.header_offset + 30 + name_len + extra_len


# -- a damaged cache entry is detected, discarded with a warning and rebuilt --------


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbled", "flipped byte"])
def test_a_damaged_cache_entry_is_rebuilt_with_a_warning(cache_dir, task_dir, damage):
    good, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    entry = report.cache_path
    with open(entry, "rb") as handle:
        data = bytearray(handle.read())
    if damage == "empty":
        data = b""
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "garbled":
        data[40:] = bytes(len(data) - 40)
    else:  # one byte inside the compressed demo grids: only a checksum can tell
        data[_member_data_offset(entry, "demo_inputs.npy") + 5] ^= 0xFF
    with open(entry, "wb") as handle:
        handle.write(data)

    with pytest.warns(UserWarning, match="damaged task-bank cache entry") as caught:
        again, report2 = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert any(str(entry) in str(w.message) for w in caught)
    assert not report2.from_cache and report2.files_parsed == 3
    _same_banks(good, again)
    # rebuilt: the next load is a clean cache hit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        third, report3 = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert report3.from_cache
    _same_banks(good, third)


def test_a_cache_entry_with_altered_arrays_is_rejected_by_its_content_hash(cache_dir, task_dir):
    """A well-formed archive whose arrays were changed (not by the loader) fails the hash."""
    good, report = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    with np.load(report.cache_path) as data:
        fields = {name: data[name] for name in data.files}
    fields["demo_inputs"] = fields["demo_inputs"].copy()
    fields["demo_inputs"][0, 0, 0, 0] = 7
    with open(report.cache_path, "wb") as handle:
        np.savez_compressed(handle, **fields)
    with pytest.warns(UserWarning, match="damaged task-bank cache entry"):
        again, report2 = load_bank_with_report(task_dir, canvas_shape=(5, 5))
    assert not report2.from_cache
    _same_banks(good, again)


# -- a solutions value that is not a list of grids names the task ---------------------


@pytest.mark.parametrize("value", ["oops", {"0": [[1]]}, None, 3])
def test_a_solutions_value_that_is_not_a_list_is_an_error(tmp_path, cache_dir, value):
    challenges = tmp_path / "challenges.json"
    solutions = tmp_path / "solutions.json"
    unsolved = {"train": TASK["train"], "test": [{"input": [[1, 1]]}]}
    challenges.write_text(json.dumps({"t1": unsolved, "t2": unsolved}))
    solutions.write_text(json.dumps({"t1": [[[2, 2]]], "t2": value}))
    with pytest.raises(TaskFormatError) as info:
        load_bank(challenges, solutions=solutions, canvas_shape=(5, 5))
    assert info.value.task_id == "t2" and info.value.file == str(solutions)
    assert "list" in info.value.problem
    # skip_invalid leaves only that task out, and says so
    with pytest.warns(UserWarning, match="t2"):
        bank = load_bank(challenges, solutions=solutions, canvas_shape=(5, 5), skip_invalid=True)
    assert list(bank.task_ids) == ["t1"] and bool(bank.test_scored[0, 0])


# -- deep nesting and huge integers are TaskFormatErrors naming the file --------------


def _hostile_files(root):
    root.mkdir(parents=True, exist_ok=True)
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "hugeint.json").write_text('{"train": [{"input": [[' + "9" * 5000 + "]]}]}")
    (root / "bigcell.json").write_text(
        json.dumps({"train": [{"input": [[10**200]], "output": [[1]]}], "test": TASK["test"]})
    )
    (root / "good.json").write_text(json.dumps(TASK))
    return root


@pytest.mark.parametrize("name", ["deep", "hugeint", "bigcell"])
def test_hostile_json_is_a_task_format_error_naming_the_file(tmp_path, cache_dir, name):
    root = _hostile_files(tmp_path / "hostile")
    path = root / f"{name}.json"
    with pytest.raises(TaskFormatError) as info:
        load_bank(path, canvas_shape=(5, 5))
    assert info.value.file == str(path)
    assert len(str(info.value)) < 300  # the value is abbreviated, never printed whole


def test_hostile_json_files_are_skipped_by_skip_invalid(tmp_path, cache_dir):
    root = _hostile_files(tmp_path / "hostile")
    with pytest.warns(UserWarning):
        bank, report = load_bank_with_report(root, canvas_shape=(5, 5), skip_invalid=True)
    assert list(bank.task_ids) == ["good"]
    assert sorted(s.task_id for s in report.skipped) == ["bigcell", "deep", "hugeint"]


def test_an_in_memory_cell_too_large_to_print_is_still_a_clean_error():
    from jaxarc.data import bank_from_tasks

    task = {"train": [{"input": [[10**5000]], "output": [[1]]}], "test": TASK["test"]}
    with pytest.raises(TaskFormatError, match="outside 0-9"):
        bank_from_tasks({"t": task}, canvas_shape=(5, 5))


# -- two files that map to one task id --------------------------------------------------


def test_two_files_with_the_same_task_id_are_an_error(task_dir):
    (task_dir / "a.JSON").write_text(json.dumps(TASK))
    with pytest.raises(TaskFormatError, match="a.JSON") as info:
        load_bank(task_dir, canvas_shape=(5, 5))
    assert info.value.task_id == "a" and "a.json" in str(info.value)
    with pytest.warns(UserWarning, match="same task id"):
        bank, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), skip_invalid=True)
    assert list(bank.task_ids) == ["a", "b", "sub/c"]
    assert [s.file for s in report.skipped] == [str(task_dir / "a.JSON")]


# -- an unreadable file is skipped like any other invalid file ------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc/self/mem")
def test_an_unreadable_file_is_reported_not_fatal(task_dir):
    # reading /proc/self/mem at offset 0 fails with EIO, even for root (chmod 000 does not)
    (task_dir / "locked.json").symlink_to("/proc/self/mem")
    with pytest.raises(TaskFormatError, match="cannot read") as info:
        load_bank(task_dir, canvas_shape=(5, 5))
    assert info.value.file == str(task_dir / "locked.json")
    with pytest.warns(UserWarning, match="cannot read"):
        bank, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), skip_invalid=True)
    assert list(bank.task_ids) == ["a", "b", "sub/c"]
    assert [s.task_id for s in report.skipped] == ["locked"]


def test_an_unreadable_file_is_reported_with_permissions(task_dir):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root reads a chmod-000 file")
    locked = task_dir / "locked.json"
    locked.write_text(json.dumps(TASK))
    locked.chmod(0)
    with pytest.warns(UserWarning, match="cannot read"):
        bank = load_bank(task_dir, canvas_shape=(5, 5), skip_invalid=True)
    assert "locked" not in bank.task_ids


# -- symlinks ------------------------------------------------------------------------


def test_dangling_and_looping_task_symlinks_are_reported(task_dir):
    (task_dir / "gone.json").symlink_to(task_dir / "nowhere.json")
    (task_dir / "loop.json").symlink_to(task_dir / "loop.json")
    with pytest.raises(TaskFormatError, match="symbolic link"):
        load_bank(task_dir, canvas_shape=(5, 5))
    with pytest.warns(UserWarning, match="symbolic link"):
        bank, report = load_bank_with_report(task_dir, canvas_shape=(5, 5), skip_invalid=True)
    assert list(bank.task_ids) == ["a", "b", "sub/c"]
    assert sorted(s.task_id for s in report.skipped) == ["gone", "loop"]


def test_symlinked_directories_are_followed_and_loops_reported(tmp_path, task_dir):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "d.json").write_text(json.dumps(TASK))
    (task_dir / "linked").symlink_to(outside, target_is_directory=True)
    (task_dir / "sub" / "up").symlink_to(task_dir, target_is_directory=True)  # a cycle
    with pytest.warns(UserWarning, match="symbolic link loop"):
        bank = load_bank(task_dir, canvas_shape=(5, 5))
    assert list(bank.task_ids) == ["a", "b", "linked/d", "sub/c"]


# -- canvas_shape must be two positive integers --------------------------------------


@pytest.mark.parametrize(
    "canvas", [(2.5, 30.9), ("a", "b"), (True, 5), (5,), (5, 5, 5), "30x30", 30, (0, 5), None]
)
def test_a_bad_canvas_shape_names_canvas_shape(task_dir, canvas):
    with pytest.raises(ValueError, match="canvas_shape") as info:
        load_bank(task_dir, canvas_shape=canvas)
    assert repr(canvas) in str(info.value) or str(canvas) in str(info.value)


def test_integer_like_canvas_shapes_are_accepted(task_dir):
    bank = load_bank(task_dir, canvas_shape=(np.int64(4), 6))
    assert bank.canvas_shape == (4, 6)
    assert bank_to_json(bank)["a"] == TASK


def test_a_directory_that_looks_like_a_task_file_is_searched(tmp_path, cache_dir):
    root = tmp_path / "tasks"
    (root / "odd.json").mkdir(parents=True)
    (root / "odd.json" / "t.json").write_text(json.dumps(TASK))
    assert list(load_bank(root, canvas_shape=(5, 5)).task_ids) == ["odd.json/t"]


def test_load_source_refuses_a_float_canvas_for_a_generator():
    from jaxarc.data import load_source

    assert load_source("gen/easy", canvas_shape=(8, 8)).canvas_shape == (8, 8)
    with pytest.raises(ValueError, match="canvas_shape"):
        load_source("gen/easy", canvas_shape=(8.0, 8.0))


def test_clearing_the_cache_removes_what_a_killed_writer_left(cache_dir, task_dir):
    from jaxarc.data import clear_bank_cache

    load_bank(task_dir, canvas_shape=(5, 5))
    (cache_dir / "banks" / ".tmp-abc.npz").write_bytes(b"half")
    assert clear_bank_cache() == 2
    assert list((cache_dir / "banks").iterdir()) == []
