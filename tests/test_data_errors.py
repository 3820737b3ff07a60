"""Bad input: every error names the file, the task, the pair and the problem."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest

from jaxarc.data import (
    TaskFormatError,
    bank_from_tasks,
    bank_to_json,
    load_bank,
    load_bank_with_report,
    parse_grid,
)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(tmp_path / "cache"))


GOOD_TASK = {
    "train": [
        {"input": [[0, 1, 2], [3, 4, 5]], "output": [[5, 4, 3], [2, 1, 0]]},
        {"input": [[6, 7], [8, 9]], "output": [[9, 8], [7, 6]]},
    ],
    "test": [{"input": [[1, 2], [3, 4]], "output": [[4, 3], [2, 1]]}],
}


def _with(path: tuple, value):
    """A copy of GOOD_TASK with the grid at ``path`` (section, pair, key) replaced."""
    task = copy.deepcopy(GOOD_TASK)
    section, index, key = path
    task[section][index][key] = value
    return task


def _write_dir(tmp_path, tasks: dict) -> object:
    root = tmp_path / "tasks"
    for task_id, task in tasks.items():
        path = root / f"{task_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task if isinstance(task, str) else json.dumps(task))
    return root


def _check(err: TaskFormatError, *, file, task_id, pair, problem: str):
    """The error's fields and message name every part of where and what."""
    message = str(err)
    assert err.file == str(file) and str(file) in message
    assert err.task_id == task_id and repr(task_id) in message
    assert err.pair == pair
    if pair is not None:
        assert pair in message
    assert problem in err.problem and problem in message


GRID_CASES = [
    # (where, bad grid, expected problem text)
    (("train", 1, "input"), [[1, 2], [3]], "ragged rows: row 1 has 1 cells but row 0 has 2"),
    (("train", 0, "output"), [[0, 10]], "colour 10 outside 0-9 at row 0, column 1"),
    (("test", 0, "input"), [[0], [-1]], "colour -1 outside 0-9 at row 1, column 0"),
    (("test", 0, "output"), [[2**70]], "outside 0-9 at row 0, column 0"),
    (("train", 0, "input"), [], "empty grid (no rows)"),
    (("train", 0, "input"), [[]], "empty grid (row 0 has no cells)"),
    (("train", 1, "output"), [[1, 3.0]], "non-integer cell 3.0 (float) at row 0, column 1"),
    (("train", 1, "output"), [[1, True]], "non-integer cell True (bool) at row 0, column 1"),
    (("test", 0, "input"), [[1], ["2"]], "non-integer cell '2' (str) at row 1, column 0"),
    (("test", 0, "input"), [[None]], "non-integer cell None (NoneType)"),
    (("train", 0, "input"), [[0] * 31], "grid of 1x31 is larger than the canvas 30x30"),
    (("train", 0, "input"), [[0]] * 31, "grid of 31x1 is larger than the canvas 30x30"),
    (("train", 0, "input"), "0123", "a grid must be a list of rows, got str"),
    (("train", 0, "input"), [1, 2], "row 0 must be a list of integers, got int"),
]


@pytest.mark.parametrize(("where", "grid", "problem"), GRID_CASES)
def test_bad_grid_in_a_directory(tmp_path, where, grid, problem):
    root = _write_dir(tmp_path, {"good": GOOD_TASK, "sub/bad": _with(where, grid)})
    with pytest.raises(TaskFormatError) as info:
        load_bank(root)
    section, index, key = where
    _check(
        info.value,
        file=root / "sub" / "bad.json",
        task_id="sub/bad",
        pair=f"{section}[{index}].{key}",
        problem=problem,
    )


TASK_CASES = [
    # (bad task, pair, expected problem text)
    ({"test": GOOD_TASK["test"]}, None, "missing 'train'"),
    ({"train": GOOD_TASK["train"]}, None, "missing 'test'"),
    ({"train": [], "test": GOOD_TASK["test"]}, None, "'train' has no pairs"),
    ({"train": GOOD_TASK["train"], "test": {"input": [[1]]}}, "test", "must be a list of pairs"),
    ({"train": [{"input": [[1]]}], "test": GOOD_TASK["test"]}, "train[0]", "missing 'output'"),
    ({"train": GOOD_TASK["train"], "test": [{"output": [[1]]}]}, "test[0]", "missing 'input'"),
    ({"train": [[[1]]], "test": GOOD_TASK["test"]}, "train[0]", "a pair must be an object"),
]


@pytest.mark.parametrize(("task", "pair", "problem"), TASK_CASES)
def test_bad_task_structure(tmp_path, task, pair, problem):
    root = _write_dir(tmp_path, {"a": GOOD_TASK, "b": task})
    with pytest.raises(TaskFormatError) as info:
        load_bank(root)
    _check(info.value, file=root / "b.json", task_id="b", pair=pair, problem=problem)


def test_invalid_json_names_file_task_and_position(tmp_path):
    root = _write_dir(tmp_path, {"a": GOOD_TASK, "broken": '{"train": [{"input": [[1, 2]'})
    with pytest.raises(TaskFormatError) as info:
        load_bank(root)
    _check(
        info.value, file=root / "broken.json", task_id="broken", pair=None, problem="invalid JSON"
    )
    assert "line 1, column" in str(info.value)


def test_invalid_json_in_a_single_file(tmp_path):
    path = tmp_path / "challenges.json"
    path.write_text('{"abc": {"train": [}')
    with pytest.raises(TaskFormatError, match="invalid JSON") as info:
        load_bank(path)
    assert info.value.file == str(path) and str(path) in str(info.value)


def test_duplicate_task_ids_in_a_file_are_not_silently_dropped(tmp_path):
    path = tmp_path / "challenges.json"
    task = json.dumps(GOOD_TASK)
    path.write_text(f'{{"t1": {task}, "t2": {task}, "t1": {task}}}')
    with pytest.raises(TaskFormatError, match="duplicate key 't1'") as info:
        load_bank(path)
    assert info.value.file == str(path)


def test_bad_task_inside_a_multi_task_file(tmp_path):
    path = tmp_path / "challenges.json"
    bad = _with(("test", 0, "input"), [[1, 2], [3, 4, 5]])
    path.write_text(json.dumps({"t1": GOOD_TASK, "t2": bad}))
    with pytest.raises(TaskFormatError) as info:
        load_bank(path)
    _check(info.value, file=path, task_id="t2", pair="test[0].input", problem="ragged rows")


def test_file_that_is_neither_task_nor_task_dict(tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps([GOOD_TASK]))
    with pytest.raises(TaskFormatError, match="neither a task") as info:
        load_bank(path)
    assert info.value.file == str(path)


def test_skip_invalid_keeps_the_good_tasks_and_reports_the_rest(tmp_path):
    root = _write_dir(
        tmp_path,
        {
            "good1": GOOD_TASK,
            "good2": _with(("train", 0, "input"), [[9]]),
            "bad_colour": _with(("train", 0, "output"), [[11]]),
            "bad_json": "{not json",
            "too_big": _with(("test", 0, "input"), [[1] * 40]),
        },
    )
    with pytest.warns(UserWarning, match="skipped 3") as caught:
        bank, report = load_bank_with_report(root, skip_invalid=True)
    assert list(bank.task_ids) == ["good1", "good2"]
    assert bank_to_json(bank)["good1"] == GOOD_TASK
    assert report.num_tasks == 2 and report.num_skipped == 3
    skipped = {s.task_id: s for s in report.skipped}
    assert set(skipped) == {"bad_colour", "bad_json", "too_big"}
    assert skipped["bad_colour"].pair == "train[0].output"
    assert "colour 11" in skipped["bad_colour"].problem
    assert "invalid JSON" in skipped["bad_json"].problem
    assert "larger than the canvas" in skipped["too_big"].problem
    summary = str(caught[0].message)
    for task_id in skipped:
        assert task_id in summary

    # a cached load reports (and warns about) the same skipped tasks
    with pytest.warns(UserWarning, match="skipped 3"):
        _, again = load_bank_with_report(root, skip_invalid=True)
    assert again.from_cache and again.skipped == report.skipped


def test_skip_invalid_with_nothing_valid_is_an_error(tmp_path):
    root = _write_dir(tmp_path, {"x": _with(("train", 0, "input"), [[12]])})
    with warnings.catch_warnings(), pytest.raises(ValueError, match="no valid tasks") as info:
        warnings.simplefilter("ignore")
        load_bank(root, skip_invalid=True)
    assert "colour 12" in str(info.value)


def test_a_grid_filling_the_canvas_exactly_is_kept_whole(tmp_path):
    grid = (np.arange(30 * 30) % 10).reshape(30, 30).tolist()
    task = _with(("test", 0, "output"), grid)
    bank = bank_from_tasks({"full": task})
    assert bank_to_json(bank)["full"] == task


def test_bad_canvas_shape_is_rejected():
    with pytest.raises(ValueError, match="canvas_shape"):
        bank_from_tasks({"a": GOOD_TASK}, canvas_shape=(0, 5))
    with pytest.raises(ValueError, match="canvas_shape"):
        bank_from_tasks({"a": GOOD_TASK}, canvas_shape=(30, 30, 1))


def test_parse_grid_without_a_file_says_in_memory():
    with pytest.raises(TaskFormatError, match="<in memory>, task 'x', train\\[0\\].input: ragged"):
        parse_grid([[1], [1, 2]], (5, 5), task_id="x", pair="train[0].input")
