"""Property tests: random valid tasks survive JSON -> bank -> lists exactly."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxarc.data import PAD_VALUE, bank_from_tasks, bank_to_json, load_bank_with_report


@st.composite
def grids(draw, canvas: tuple[int, int]) -> list[list[int]]:
    rows = draw(st.integers(1, canvas[0]))
    cols = draw(st.integers(1, canvas[1]))
    cells = draw(st.lists(st.integers(0, 9), min_size=rows * cols, max_size=rows * cols))
    return [cells[r * cols : (r + 1) * cols] for r in range(rows)]


@st.composite
def tasks(draw, canvas: tuple[int, int]) -> dict:
    def pair(with_output: bool) -> dict:
        out = {"input": draw(grids(canvas))}
        if with_output:
            out["output"] = draw(grids(canvas))
        return out

    num_demos = draw(st.integers(1, 4))
    scored = draw(st.lists(st.booleans(), min_size=1, max_size=3))
    return {"train": [pair(True) for _ in range(num_demos)], "test": [pair(s) for s in scored]}


@st.composite
def task_sets(draw) -> tuple[tuple[int, int], dict]:
    canvas = (draw(st.integers(1, 7)), draw(st.integers(1, 7)))
    ids = draw(
        st.lists(
            st.text("abcdef0123456789", min_size=1, max_size=6), min_size=1, max_size=4, unique=True
        )
    )
    return canvas, {task_id: draw(tasks(canvas)) for task_id in ids}


def _reference_padding_ok(bank, raw_tasks: dict) -> None:
    """NumPy reference: every cell outside each real grid is PAD_VALUE; counts and flags match."""
    height, width = bank.canvas_shape
    host = {
        name: np.asarray(value) for name, value in vars(bank).items() if hasattr(value, "shape")
    }
    for i, task in enumerate(raw_tasks.values()):
        assert int(host["num_demos"][i]) == len(task["train"])
        assert int(host["num_tests"][i]) == len(task["test"])
        expected_scored = [("output" in p) for p in task["test"]]
        expected_scored += [False] * (bank.max_tests - len(task["test"]))
        assert host["test_scored"][i].tolist() == expected_scored
        for field, section, key in (
            ("demo_inputs", "train", "input"),
            ("demo_outputs", "train", "output"),
            ("test_inputs", "test", "input"),
            ("test_outputs", "test", "output"),
        ):
            padded = host[field][i]
            expected = np.full(padded.shape, PAD_VALUE, np.int8)
            for k, pair in enumerate(task[section]):
                if key in pair:
                    grid = np.asarray(pair[key], np.int8)
                    expected[k, : grid.shape[0], : grid.shape[1]] = grid
            np.testing.assert_array_equal(padded, expected)
        assert padded.shape[-2:] == (height, width)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_sets())
def test_in_memory_round_trip(case):
    canvas, raw_tasks = case
    bank = bank_from_tasks(raw_tasks, canvas_shape=canvas)
    assert list(bank.task_ids) == list(raw_tasks)
    assert bank_to_json(bank) == raw_tasks
    _reference_padding_ok(bank, raw_tasks)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(task_sets(), st.booleans())
def test_file_and_directory_round_trip_through_the_cache(case, as_directory):
    canvas, raw_tasks = case
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXARC_CACHE_DIR", os.path.join(tmp, "cache"))
        if as_directory:
            source = os.path.join(tmp, "tasks")
            for task_id, task in raw_tasks.items():
                os.makedirs(source, exist_ok=True)
                with open(os.path.join(source, f"{task_id}.json"), "w") as f:
                    json.dump(task, f)
            expected = dict(sorted(raw_tasks.items()))
        else:
            source = os.path.join(tmp, "challenges.json")
            with open(source, "w") as f:
                json.dump(raw_tasks, f)
            expected = raw_tasks
        first, report1 = load_bank_with_report(source, canvas_shape=canvas)
        second, report2 = load_bank_with_report(source, canvas_shape=canvas)
    assert not report1.from_cache and report2.from_cache
    assert bank_to_json(first) == expected
    assert bank_to_json(second) == expected
