"""The content language as the program learner's vocabulary
(``jaxarc.solve.language.vocabulary``), the mixed step and replay
(``jaxarc.solve.mixed_replay``), and ``jaxarc.solve.program_rl`` learning from both."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from jaxarc.solve.language.colours import grid_colours
from jaxarc.solve.language.masks import FAMILY_NAMES
from jaxarc.solve.language.objects import background
from jaxarc.solve.language.paint import paint_cells
from jaxarc.solve.language.program import replay_programs
from jaxarc.solve.language.views import task_views
from jaxarc.solve.language.vocabulary import (
    ITEM_ACTIONS,
    LANGUAGE_KINDS,
    MASK_CLASSES,
    PAINT_ITEM_KINDS,
    PAINT_KINDS,
    language_vocabulary,
)
from jaxarc.solve.mixed_replay import replay_mixed
from jaxarc.solve.prior_store import load_prior
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_attempts import program_rl_attempts
from jaxarc.solve.program_rl import ProgramRLConfig, learn_program
from jaxarc.solve.program_tasks import ALL_KINDS, NUM_KINDS, program_vocabulary, task_arrays
from jaxarc.solve.program_variant import LearnerVariant
from jaxarc.solve.replay import replay_on_task

SMALL = ProgramRLConfig(updates=40, group_size=32, program_length=4)
LANGUAGE = LearnerVariant(language=True)


def _isolated_singles(seed: int, side: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A grid with two 2x2 blocks and three lone cells, all of colour 2, on background 0,
    and the same grid with the lone cells (objects of size 1) recoloured 5."""
    rng = np.random.default_rng(seed)
    while True:
        grid = np.zeros((side, side), np.int8)
        out = grid.copy()
        taken = np.zeros((side + 2, side + 2), bool)  # a margin: nothing touches (8 around)
        ok = True
        for size in (2, 2, 1, 1, 1):
            r, c = (int(v) for v in rng.integers(0, side - size + 1, 2))
            if taken[r : r + size + 2, c : c + size + 2].any():
                ok = False
                break
            taken[r + 1 : r + size + 1, c + 1 : c + size + 1] = True
            grid[r : r + size, c : c + size] = 2
            out[r : r + size, c : c + size] = 2 if size == 2 else 5
        if ok:
            return grid, out


def _singles_task(seed: int) -> Problem:
    pairs = [_isolated_singles(seed * 10 + k) for k in range(4)]
    return Problem(
        f"singles{seed}",
        tuple(i for i, _ in pairs[:3]),
        tuple(o for _, o in pairs[:3]),
        (pairs[3][0],),
    )


def _numpy_paint(problem: Problem, paint) -> list[np.ndarray]:
    """``paint`` written with NumPy on every grid (demonstration inputs, then tests)."""
    grids = [*problem.demo_inputs, *problem.test_inputs]
    bg = background(*grids)
    made = []
    for view, grid in zip(task_views(problem)["input"], grids, strict=True):
        out = grid.copy()
        for colour, mask in paint_cells(paint, view, grid_colours(grid, bg)):
            out[mask] = colour
        made.append(out)
    return made


def test_language_items_replayed_by_the_environment_write_what_their_paints_choose() -> None:
    task = _singles_task(0)
    vocabulary = language_vocabulary(task)
    grids = [*task.demo_inputs, *task.test_inputs]
    assert len(vocabulary) >= 2
    assert vocabulary.operations.dtype == np.int32 and vocabulary.masks.dtype == np.bool_
    assert vocabulary.operations.shape[:2] == (len(vocabulary), len(grids))
    assert vocabulary.operations.shape[2] <= ITEM_ACTIONS
    assert vocabulary.masks.shape == (*vocabulary.operations.shape, 30, 30)
    kinds = vocabulary.kinds
    assert kinds.dtype == np.int32 and ((kinds >= 0) & (kinds < LANGUAGE_KINDS)).all()
    paints = [k for k, paint in enumerate(vocabulary.paints) if paint is not None]
    views = [k for k, paint in enumerate(vocabulary.paints) if paint is None]
    assert views == list(range(len(views)))  # the view items first
    assert (kinds[views] >= PAINT_ITEM_KINDS).all()
    assert [PAINT_KINDS[kinds[k] // MASK_CLASSES] for k in paints] == [
        vocabulary.paints[k].kind for k in paints
    ]
    # the rule the task needs is among the items (lone cells are objects of size 1)
    input_paints = [k for k in paints if vocabulary.views[k] == "input"]
    assert all(vocabulary.parents[k] == -1 for k in input_paints)
    solving = [
        k
        for k in input_paints
        if all(
            np.array_equal(a, b)
            for a, b in zip(
                _numpy_paint(task, vocabulary.paints[k])[:3], task.demo_outputs, strict=True
            )
        )
    ]
    assert solving, [vocabulary.describe(k) for k in range(len(vocabulary))]
    objects = FAMILY_NAMES.index("objects")
    assert vocabulary.kinds[solving[0]] == PAINT_KINDS.index("fill") * MASK_CLASSES + objects
    for item in input_paints:
        expected = _numpy_paint(task, vocabulary.paints[item])
        actions = [
            (vocabulary.operations[item, g], vocabulary.masks[item, g]) for g in range(len(grids))
        ]
        by_mask_env = replay_programs(grids, actions)  # the environment, mask format
        one_step = np.zeros((1, len(grids), 5), np.int32)
        one_step[..., 0] = -1  # the bbox no-op, then the item's mask actions
        solves, tests = replay_mixed(
            task, one_step, vocabulary.operations[item][None], vocabulary.masks[item][None]
        )
        for g in range(len(grids)):
            np.testing.assert_array_equal(by_mask_env[g], expected[g], f"item {item} grid {g}")
        np.testing.assert_array_equal(tests[0], expected[-1], f"item {item}")
        assert solves == (item in solving)


def test_a_mixed_replay_of_whole_grid_actions_is_their_bbox_replay() -> None:
    task = _singles_task(1)
    table = program_vocabulary(task)
    rng = np.random.default_rng(3)
    for _ in range(3):
        rows = table[rng.integers(1, len(table), 3)]
        none = np.full((3, rows.shape[1], 1), -1, np.int32)
        masks = np.zeros((3, rows.shape[1], 1, 30, 30), bool)
        expected = replay_on_task(task, rows)
        got = replay_mixed(task, rows, none, masks)
        assert got[0] == expected[0]
        np.testing.assert_array_equal(got[1][0], expected[1][0])


def test_the_input_view_has_paints_only_for_wrong_cells_of_same_shape_outputs() -> None:
    task = _singles_task(2)
    unchanged = dataclasses.replace(task, demo_outputs=task.demo_inputs)
    assert "input" not in language_vocabulary(unchanged).views
    assert "input" in language_vocabulary(task).views
    cropped = dataclasses.replace(task, demo_outputs=tuple(g[:4] for g in task.demo_outputs))
    language = language_vocabulary(cropped)
    assert "input" not in language.views
    views = {
        name for name, paint in zip(language.views, language.paints, strict=True) if paint is None
    }
    assert views <= set(task_views(cropped))
    arrays, table, _ = task_arrays(cropped, language)
    assert len(table) == len(program_vocabulary(cropped)) + len(language)
    whole_grid = len(table) - len(language)
    parents = np.asarray(arrays.parents)[whole_grid : len(table)]
    expected = np.where(language.parents >= 0, whole_grid + language.parents, 0)
    np.testing.assert_array_equal(parents, expected)


def test_a_paint_of_a_view_solves_after_its_view_item_and_not_alone() -> None:
    task = _singles_task(5)
    flipped = dataclasses.replace(
        task, demo_outputs=tuple(np.ascontiguousarray(g[:, ::-1]) for g in task.demo_outputs)
    )
    language = language_vocabulary(flipped)
    view = language.views.index("flip left-right")
    assert language.paints[view] is None
    children = [k for k in range(len(language)) if language.parents[k] == view]
    assert children and all(language.views[k] == "flip left-right" for k in children)
    grids = flipped.num_demos + len(flipped.test_inputs)
    bbox_noop = np.full((2, grids, 5), -1, np.int32)

    def solves(*items: int) -> bool:
        rows = bbox_noop[: len(items)]
        return replay_mixed(
            flipped, rows, language.operations[list(items)], language.masks[list(items)]
        )[0]

    solving = [k for k in children if solves(view, k)]
    assert solving, [language.describe(k) for k in children]
    assert not any(solves(k) for k in solving)  # a view's paint needs its view laid first
    expected = flipped.test_inputs[0][:, ::-1].copy()
    expected[_isolated_singles(53)[1][:, ::-1] == 5] = 5
    made = replay_mixed(
        flipped,
        bbox_noop,
        language.operations[[view, solving[0]]],
        language.masks[[view, solving[0]]],
    )[1][0]
    np.testing.assert_array_equal(made, expected)


@pytest.mark.slow  # compiles the learner with and without the language (~20 s)
def test_program_rl_learns_a_mask_rule_only_with_the_language_and_compiles_once_per_bucket(
    count_compilations,
) -> None:
    task = _singles_task(0)
    attempts, info = program_rl_attempts(task, SMALL, jax.random.key(0), variant=LANGUAGE)
    assert info["language_items"] >= 2
    assert info["greedy_solves_demos"] or info["best_solves_demos"]
    vocabulary = language_vocabulary(task)
    rules = {  # the items that alone turn every demonstration input into its output
        vocabulary.describe(k)
        for k, paint in enumerate(vocabulary.paints)
        if paint is not None
        and all(
            np.array_equal(a, b)
            for a, b in zip(_numpy_paint(task, paint)[:3], task.demo_outputs, strict=True)
        )
    }
    assert rules & set(info["best_program"]), info["best_program"]
    expected = task.test_inputs[0].copy()
    expected[_isolated_singles(3)[1] == 5] = 5
    assert np.array_equal(attempts[0][0], expected)
    _, without = program_rl_attempts(task, SMALL, jax.random.key(0))
    assert without["language_items"] == 0
    assert not without["greedy_solves_demos"] and not without["best_solves_demos"]
    other = _singles_task(4)  # the same buckets: canvas, demonstrations, rows, actions
    assert task_arrays(other, language_vocabulary(other))[0].masks.shape == (
        task_arrays(task, language_vocabulary(task))[0].masks.shape
    )
    with count_compilations() as clock:
        learned, _, _ = learn_program(other, SMALL, jax.random.key(1), variant=LANGUAGE)
    assert clock.programs == 0
    assert np.isfinite(np.asarray(learned.mean_reward)).all()


def test_the_shipped_prior_loads_and_gives_the_language_kinds_zero() -> None:
    from jaxarc.solve.program_rl_method import DEFAULT_PRIOR_DIR

    prior, _ = load_prior(DEFAULT_PRIOR_DIR)
    assert prior.shape == (NUM_KINDS, NUM_KINDS) and ALL_KINDS == NUM_KINDS + LANGUAGE_KINDS
    task = _singles_task(0)
    language = language_vocabulary(task)
    untrained = dataclasses.replace(SMALL, updates=0)
    learned, table, _ = learn_program(task, untrained, jax.random.key(0), prior, LANGUAGE)
    arrays, _, _ = task_arrays(task, language)
    logits = np.asarray(learned.logits)
    whole_grid = len(table) - len(language)
    kinds = np.asarray(arrays.kinds)[:whole_grid]
    np.testing.assert_array_equal(
        logits[:whole_grid, :whole_grid], prior[kinds[:, None], kinds[None, :]]
    )
    assert (logits[:, whole_grid : len(table)] == 0).all()
    assert (logits[whole_grid : len(table), : len(table)] == 0).all()
