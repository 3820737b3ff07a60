"""ARC-style task sheets (PNG and one-file SVG), NO_COLOR / non-TTY text, rgb_array_list."""

from __future__ import annotations

import io
import re

import gymnasium
import numpy as np
import pytest
from gym_helpers import SMALL_ID

from jaxarc.cli.main import main
from jaxarc.data import bank_from_tasks, load_bank
from jaxarc.grid import operation_ids as ops
from jaxarc.render import (
    ARC_PALETTE,
    colour_enabled,
    load_png,
    render_task_sheet,
    task_sheet_svg,
    to_terminal,
)

TASK = {
    "train": [
        {"input": [[1, 0], [0, 1]], "output": [[2, 2, 2], [2, 0, 2]]},
        {"input": [[3]], "output": [[4, 5], [6, 7], [8, 9]]},
    ],
    "test": [{"input": [[5, 6, 7]], "output": [[9]]}],
}


@pytest.fixture(scope="module")
def task():
    return bank_from_tasks({"abc123": TASK}, canvas_shape=(4, 4)).task_by_id("abc123")


def test_sheet_rows_read_input_then_output_left_to_right(task):
    _, layout = render_task_sheet(task, "abc123", cell_size=10, return_layout=True)
    for k in range(2):  # each demo row: input left of its output, on the same row
        (top_in, left_in), (top_out, left_out) = (
            layout[("demo", k, "input")],
            layout[("demo", k, "output")],
        )
        assert top_in == top_out and left_out > left_in + 10 * len(TASK["train"][k]["input"][0])
    # rows go down the page, and every input starts in one column
    assert layout[("demo", 1, "input")][0] > layout[("demo", 0, "input")][0]
    assert layout[("test", 0, "input")][0] > layout[("demo", 1, "input")][0]
    assert len({left for (_, _, which), (_, left) in layout.items() if which == "input"}) == 1
    assert ("test", 0, "output") not in layout  # hidden unless show_test_outputs


def test_svg_sheet_is_one_document_with_every_grid_in_place(task):
    svg = task_sheet_svg(task, "abc123", cell_size=10, show_test_outputs=True)
    assert svg.count("<svg") == 1 and svg.rstrip().endswith("</svg>")
    groups = re.findall(
        r'<g transform="translate\(([\d.]+),([\d.]+)\)" data-kind="(\w+)" data-pair="(\d)" '
        r'data-which="(\w+)">(.*?)</g>',
        svg,
        re.S,
    )
    found = {
        (kind, int(pair), which): (float(x), float(y), body)
        for x, y, kind, pair, which, body in groups
    }
    expected = {
        ("demo", 0, "input"): TASK["train"][0]["input"],
        ("demo", 0, "output"): TASK["train"][0]["output"],
        ("demo", 1, "input"): TASK["train"][1]["input"],
        ("demo", 1, "output"): TASK["train"][1]["output"],
        ("test", 0, "input"): TASK["test"][0]["input"],
        ("test", 0, "output"): TASK["test"][0]["output"],
    }
    assert set(found) == set(expected)
    for key, grid in expected.items():
        cells = re.findall(
            r'fill="#([0-9a-f]{6})".*?data-row="(\d+)" data-col="(\d+)"', found[key][2]
        )
        assert len(cells) == np.size(grid)
        for fill, r, c in cells:
            assert bytes.fromhex(fill) == bytes(ARC_PALETTE[grid[int(r)][int(c)]]), key
    assert found[("demo", 0, "input")][0] < found[("demo", 0, "output")][0]  # input -> output
    assert found[("demo", 0, "input")][1] == found[("demo", 0, "output")][1]
    for label in ("input 2x2", "output 2x3", "output 3x2", "input 1x3", "task abc123"):
        assert label in svg


def test_cli_writes_one_svg_file_and_a_png_sheet(tmp_path, capsys):
    out = tmp_path / "task.svg"
    assert main(["render", "007bbfb7", "--out", str(out), "--cell-size", "6"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["task.svg"]
    svg = out.read_text()
    task = load_bank("arc-agi-1/training").task_by_id("007bbfb7")
    assert svg.count("<g transform") == 2 * int(task.num_demos) + int(task.num_tests)
    png = tmp_path / "task.png"
    assert main(["render", "007bbfb7", "--out", str(png), "--cell-size", "6"]) == 0
    assert load_png(png).ndim == 3


def test_ansi_honours_no_color_and_non_terminals(monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    grid = np.array([[1, 2], [-1, 3]], np.int8)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_enabled(Terminal()) and not colour_enabled(io.StringIO())
    assert "\x1b[" in to_terminal(grid, stream=Terminal())
    assert to_terminal(grid, stream=io.StringIO()) == "12\n.3"
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_enabled(Terminal()) and to_terminal(grid, stream=Terminal()) == "12\n.3"
    monkeypatch.setenv("NO_COLOR", "")  # an empty NO_COLOR does not count
    assert colour_enabled(Terminal())
    # the CLI's stdout is captured (not a terminal): plain digits, no escape codes
    monkeypatch.delenv("NO_COLOR")
    assert main(["render", "007bbfb7", "--format", "ansi"]) == 0
    printed = capsys.readouterr().out
    assert "\x1b[" not in printed and "007bbfb7 demo 0 input 3x3\n077\n777\n077" in printed
    # Gymnasium's ansi render mode returns text: plain under NO_COLOR
    env = gymnasium.make(SMALL_ID, render_mode="ansi")
    env.reset(seed=0)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in env.render()


def test_rgb_array_list_collects_a_frame_per_reset_and_step():
    env = gymnasium.make(SMALL_ID, render_mode="rgb_array_list", cell_size=8)
    env.reset(seed=0, options={"task_id": "grow", "pair": 1})
    env.step({"operation": ops.FILL_0 + 7, "row": 0, "col": 0})
    env.step({"operation": ops.FILL_0 + 2, "row": 0, "col": 0})
    frames = env.render()
    assert len(frames) == 3 and all(f.dtype == np.uint8 and f.ndim == 3 for f in frames)
    np.testing.assert_array_equal(frames[1][4, 4], ARC_PALETTE[7])  # cell (0, 0) after step 1
    np.testing.assert_array_equal(frames[2][4, 4], ARC_PALETTE[2])
    assert env.render() == []  # render() empties the list
    env.reset(seed=1)
    assert len(env.render()) == 1
