"""The recolour view of the content language: keys learned on small hand-made tasks and
checked against NumPy loops, and the training tasks each property serves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage
from training_tasks import text_grid as _grid
from training_tasks import text_problem as _problem
from training_tasks import training_and_truth as _training

from jaxarc.solve.language.finder import language_solutions
from jaxarc.solve.language.recolour import (
    PROPERTIES,
    RECOLOUR_TASKS,
    describe_keys,
    recolour_grid,
    recolour_keys,
)
from jaxarc.solve.language.views import VIEW_TASKS, task_views


def _by_size_loop(grid: np.ndarray, source: int, key: dict[int, int], default: int) -> np.ndarray:
    """Each 4-connected object of ``source`` painted ``key[size]`` (``default`` unseen)."""
    out = grid.copy()
    labels, count = ndimage.label(grid == source)
    for k in range(1, count + 1):
        cells = labels == k
        out[cells] = key.get(int(cells.sum()), default)
    return out


def test_a_size_key_with_one_exception_paints_unseen_sizes_by_its_default() -> None:
    # objects of size 2 become 2, of sizes 1 and 3 become 1
    problem = _problem(
        [
            (["5050", "5055", "0000", "0055"], ["2010", "2011", "0000", "0022"]),
            (["5500", "0005", "5000", "0000", "5555"], ["2200", "0001", "1000", "0000", "1111"]),
        ],
        [["55555", "00000", "55050"]],
    )
    (rule,) = recolour_keys(problem, 0)
    assert (rule.source, rule.prop, rule.kind, rule.default) == (5, "size", "4-connected", 1)
    test = problem.test_inputs[0]
    want = _by_size_loop(test, 5, {1: 1, 2: 2, 3: 1, 4: 1}, 1)  # size 5: the default
    assert recolour_grid(test, 0, [rule]).tolist() == want.tolist()
    assert describe_keys([rule]) == "recolour 5 by size (4-connected)"


def test_a_key_of_several_exceptions_gives_an_unseen_value_no_colour() -> None:
    problem = _problem(
        [
            (
                ["5005", "0005", "0000", "5500", "0000", "5550"],
                ["1002", "0002", "0000", "2200", "0000", "3330"],
            )
        ],
        [["5555"]],
    )
    (rule,) = recolour_keys(problem, 0)
    assert rule.prop == "size" and rule.default == -1
    assert recolour_grid(problem.test_inputs[0], 0, [rule]) is None
    assert recolour_grid(_grid(["5505"]), 0, [rule]).tolist() == [[2, 2, 0, 1]]


def test_holes_are_filled_by_the_parity_of_their_size() -> None:
    box = ["11111", "10001", "10001", "11111", "00000"]
    filled = ["11111", "12221", "12221", "11111", "00000"]
    dot = ["111000", "101000", "111000"]
    dotted = ["111000", "171000", "111000"]
    problem = _problem([(box, filled), (dot, dotted)], [["1111", "1001", "1111"]])
    (rule,) = recolour_keys(problem, 0)
    assert (rule.source, rule.prop, rule.kind) == (0, "size parity", "holes")
    out = recolour_grid(problem.test_inputs[0], 0, [rule])
    assert out.tolist() == _grid(["1111", "1221", "1111"]).tolist()


def test_aligned_colour_takes_the_legend_colour_in_line_even_unseen() -> None:
    problem = _problem(
        [(["20030", "00000", "55055"], ["20030", "00000", "22033"])],
        [["04009", "00000", "55555", "00000"]],
    )
    (rule,) = recolour_keys(problem, 0)
    assert rule.prop == "aligned colour" and rule.self_key
    # one object under both 4 and 9: no one colour, no grid; apart, each its own
    assert recolour_grid(problem.test_inputs[0], 0, [rule]) is None
    out = recolour_grid(_grid(["04009", "00000", "55055"]), 0, [rule])
    assert out.tolist() == _grid(["04009", "00000", "44099"]).tolist()


def test_properties_match_loops() -> None:
    grid = _grid(["3300", "0300", "0003"])
    cells = np.zeros(grid.shape, bool)
    cells[0, :2] = cells[1, 1] = True
    box = (slice(0, 2), slice(0, 2))
    values = {name: fn(grid, 0, 3, cells, box) for name, fn in PROPERTIES.items()}
    assert values["size"] == 3 and values["size parity"] == 1
    assert values["border sides"] == (True, False, True, False)
    assert values["aligned colour"] is None
    other = cells.copy()
    other[:] = False
    other[1, 1] = other[1, 2] = other[0, 1] = True  # the same three cells, turned
    assert values["shape"] != PROPERTIES["shape"](grid, 0, 3, other, (slice(0, 2), slice(1, 3)))


def test_no_key_when_a_value_becomes_two_colours_or_objects_split() -> None:
    conflict = _problem(
        [(["00000", "05050", "00000"], ["00000", "01020", "00000"])], [["00000", "05000", "00000"]]
    )
    assert recolour_keys(conflict, 0) == []
    split = _problem([(["5500", "0000"], ["1200", "0000"])], [["5000"]])
    assert recolour_keys(split, 0) == []
    assert "recolour" not in " ".join(task_views(split))


@pytest.mark.long  # every listed task searched whole (make test-long; CI runs it)
@pytest.mark.parametrize("prop", tuple(RECOLOUR_TASKS))
def test_each_property_recolours_its_training_tasks(prop: str) -> None:
    """The recolour view alone solves each task (a program that recolours by ``prop``)
    and predicts its test outputs."""
    problems, tests = _training()
    for task_id in RECOLOUR_TASKS[prop]:
        found = language_solutions(problems[task_id], 1, views=("recolour",))
        assert found and f" by {prop} (" in found[0].program.view, task_id
        for got, want in zip(found[0].predictions, tests[task_id], strict=True):
            assert np.array_equal(got, want), task_id


def test_the_recolour_view_tasks_have_no_program_without_it() -> None:
    problems, _ = _training()
    others = ("input", "crop", "blank", "shift", "attract", "fall", "parts", "repair", "count")
    for task_id in VIEW_TASKS["recolour"]:
        assert language_solutions(problems[task_id], 1, views=others) == [], task_id
        assert language_solutions(problems[task_id], 1)[0].program.view.startswith("recolour")
