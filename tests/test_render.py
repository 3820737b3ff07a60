"""Rendering: pixel colours of rendered grids, PNG/GIF/SVG/ANSI read back, task sheets."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jaxarc.data import bank_from_tasks
from jaxarc.render import (
    ARC_PALETTE,
    GRID_LINE_RGB,
    PADDING_RGB,
    load_gif_frames,
    load_png,
    render_batch,
    render_rgb,
    render_task_sheet,
    save_gif,
    save_png,
    selection_outline,
    tile_images,
    to_ansi,
    to_svg,
    to_text,
)
from jaxarc.render.raster import BACKGROUND_RGB


def expected_rgb(value: int) -> np.ndarray:
    return PADDING_RGB if value < 0 else ARC_PALETTE[value]


def cell_centre(image: np.ndarray, row: int, col: int, cell: int, top=0, left=0) -> np.ndarray:
    return image[top + row * cell + cell // 2, left + col * cell + cell // 2]


grids = hnp.arrays(
    np.int8,
    st.tuples(st.integers(1, 7), st.integers(1, 7)),
    elements=st.integers(-1, 9),
)


@settings(max_examples=25, deadline=None)
@given(grid=grids, cell=st.integers(1, 9), lines=st.booleans())
def test_render_rgb_matches_numpy_reference(grid, cell, lines):
    image = render_rgb(grid, cell, grid_lines=lines)
    assert image.dtype == np.uint8 and image.shape == (
        grid.shape[0] * cell,
        grid.shape[1] * cell,
        3,
    )
    # reference: every pixel takes its cell's colour, except grid-line pixels
    rows = np.arange(image.shape[0]) // cell
    cols = np.arange(image.shape[1]) // cell
    reference = np.array([[expected_rgb(int(grid[r, c])) for c in cols] for r in rows], np.uint8)
    if lines and cell >= 4:
        on_line = (np.arange(image.shape[0]) % cell == 0)[:, None] | (
            np.arange(image.shape[1]) % cell == 0
        )[None, :]
        reference[on_line] = GRID_LINE_RGB
    np.testing.assert_array_equal(image, reference)


def test_render_rgb_crops_to_shape_and_rejects_bad_grids():
    grid = np.full((5, 5), -1, np.int8)
    grid[:2, :3] = [[1, 2, 3], [4, 5, 6]]
    image = render_rgb(grid, 4, shape=(2, 3))
    assert image.shape == (8, 12, 3)
    np.testing.assert_array_equal(cell_centre(image, 1, 2, 4), ARC_PALETTE[6])
    with pytest.raises(ValueError, match=r"outside -1\.\.9, first at \(row 1, col 0\): 12"):
        render_rgb(np.array([[0, 1], [12, 3]]))
    with pytest.raises(ValueError, match="2-D"):
        render_rgb(np.zeros((2, 2, 2), np.int8))
    with pytest.raises(ValueError, match="does not fit"):
        render_rgb(grid, shape=(6, 1))


def test_save_png_reads_back_exact_cell_colours(tmp_path):
    grid = np.array([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [-1, -1, 9, 0, -1]], np.int8)
    path = save_png(render_rgb(grid, 10), tmp_path / "sub" / "grid.png")
    image = load_png(path)
    assert image.shape == (30, 50, 3)
    for (r, c), value in np.ndenumerate(grid):
        np.testing.assert_array_equal(cell_centre(image, r, c, 10), expected_rgb(int(value)))
    # a raw grid is drawn first
    np.testing.assert_array_equal(
        load_png(save_png(grid, tmp_path / "raw.png", cell_size=3)), render_rgb(grid, 3)
    )


def test_svg_and_ansi_give_each_cell_its_colour():
    grid = np.array([[3, -1], [9, 0]], np.int8)
    svg = to_svg(grid, 8)
    fills = {
        (int(r), int(c)): fill
        for fill, r, c in re.findall(
            r'fill="(#[0-9a-f]{6})".*?data-row="(\d+)" data-col="(\d+)"', svg
        )
    }
    assert len(fills) == 4
    for (r, c), value in np.ndenumerate(grid):
        assert fills[(r, c)] == "#" + "".join(f"{v:02x}" for v in expected_rgb(int(value)))
    lines = to_ansi(grid).splitlines()
    assert len(lines) == 2
    for r, line in enumerate(lines):
        colours = [tuple(map(int, m)) for m in re.findall(r"48;2;(\d+);(\d+);(\d+)m", line)]
        assert colours == [tuple(int(v) for v in expected_rgb(int(x))) for x in grid[r]]
    assert to_text(grid) == "3.\n90"


def test_selection_outline_is_the_inner_border_of_the_region():
    selection = np.zeros((3, 4), bool)
    selection[1, 1:3] = True  # a 1x2 region
    outline = selection_outline(selection, cell_size=8, thickness=2)
    region = np.zeros((24, 32), bool)
    region[8:16, 8:24] = True
    interior = np.zeros_like(region)
    interior[10:14, 10:22] = True
    np.testing.assert_array_equal(outline, region & ~interior)


def test_render_batch_places_each_thumbnail(tmp_path):
    batch = np.full((5, 4, 4), -1, np.int8)
    for b in range(5):
        batch[b, :2, :3] = b  # colour b in a 2x3 area
    shapes = np.tile(np.array([2, 3], np.int32), (5, 1))
    image = load_png(
        save_png(render_batch(batch, 5, shapes=shapes, columns=3, gap=4), tmp_path / "b.png")
    )
    assert image.shape == (2 * 10 + 3 * 4, 3 * 15 + 4 * 4, 3)
    for b in range(5):
        row, col = divmod(b, 3)
        top, left = 4 + row * (10 + 4), 4 + col * (15 + 4)
        np.testing.assert_array_equal(cell_centre(image, 1, 2, 5, top, left), ARC_PALETTE[b])
    # the sixth slot is empty background
    np.testing.assert_array_equal(image[4 + 14 + 5, 4 + 2 * 19 + 7], BACKGROUND_RGB)
    with pytest.raises(ValueError, match="3-D"):
        render_batch(batch[0])
    with pytest.raises(ValueError, match="at least one"):
        tile_images([])


def test_gif_keeps_frame_colours_exactly(tmp_path):
    frames = [render_rgb(np.full((2, 3), c, np.int8), 6) for c in range(10)]
    frames[3] = render_rgb(np.array([[-1, 4, 5]], np.int8), 6)  # a smaller frame is padded
    path = save_gif(frames, tmp_path / "a.gif", frame_ms=50)
    loaded = load_gif_frames(path)
    assert len(loaded) == 10
    for frame, back in zip(frames, loaded, strict=True):
        np.testing.assert_array_equal(back[: frame.shape[0], : frame.shape[1]], frame)


TASK = {
    "train": [
        {"input": [[1, 0], [0, 1]], "output": [[2, 2, 2], [2, 0, 2]]},
        {"input": [[3]], "output": [[4, 5], [6, 7], [8, 9]]},
    ],
    "test": [{"input": [[5, 6, 7]], "output": [[9]]}],
}


@pytest.fixture(scope="module")
def small_task():
    bank = bank_from_tasks({"abc123": TASK}, canvas_shape=(4, 4))
    return bank.task_by_id("abc123")


@pytest.mark.parametrize("show_test_outputs", [False, True])
def test_task_sheet_png_shows_every_grid_at_its_layout(tmp_path, small_task, show_test_outputs):
    sheet, layout = render_task_sheet(
        small_task,
        "abc123",
        cell_size=10,
        show_test_outputs=show_test_outputs,
        return_layout=True,
    )
    image = load_png(save_png(sheet, tmp_path / "sheet.png"))
    expected = {
        ("demo", 0, "input"): TASK["train"][0]["input"],
        ("demo", 0, "output"): TASK["train"][0]["output"],
        ("demo", 1, "input"): TASK["train"][1]["input"],
        ("demo", 1, "output"): TASK["train"][1]["output"],
        ("test", 0, "input"): TASK["test"][0]["input"],
    }
    if show_test_outputs:
        expected[("test", 0, "output")] = TASK["test"][0]["output"]
    assert set(layout) == set(expected)
    for key, grid in expected.items():
        top, left = layout[key]
        for (r, c), value in np.ndenumerate(np.array(grid)):
            np.testing.assert_array_equal(
                cell_centre(image, r, c, 10, top, left), ARC_PALETTE[value], err_msg=str(key)
            )
    # the title strip carries the id: its text pixels differ from the background
    assert (image[6:20, 6:200] != BACKGROUND_RGB).any()


def test_task_sheet_rejects_a_whole_bank(small_task):
    bank = bank_from_tasks({"abc123": TASK}, canvas_shape=(4, 4))
    with pytest.raises(ValueError, match="one task"):
        render_task_sheet(bank)
