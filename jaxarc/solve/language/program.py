"""A view and its paints as the environment's own actions, replayed by the environment.

A **language program** is a view (:mod:`jaxarc.solve.language.views`) and a list of paints
(:mod:`jaxarc.solve.language.paint`). On each grid of a task it becomes a sequence of
``MaskAction`` s, each with that grid's own mask:

* unless the view is the input itself: ``RESIZE`` to the canvas's shape (the mask is the
  canvas's rectangle at the top-left corner), then ``FILL_c`` on the canvas's cells of each
  colour ``c`` it holds;
* per paint, one ``FILL_c`` per colour it writes, on the cells its rule chooses there.

:func:`replay_programs` plays these actions with the environment's step code
(:func:`jaxarc.envs.hindsight.replay_actions` in the mask format, on the 30x30 canvas), so a
program counts as a solution only if the environment turns every demonstration input into
its output, and its test predictions are the grids the environment makes.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int8, Int32

from jaxarc.envs.config import (
    EnvironmentConfig,
    JaxArcConfig,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
)
from jaxarc.envs.hindsight import replay_actions
from jaxarc.envs.structured_actions import MaskAction
from jaxarc.grid import operation_ids as ops
from jaxarc.solve.language.colours import grid_colours
from jaxarc.solve.language.paint import Paint, paint_cells, view_masks
from jaxarc.solve.language.view import View
from jaxarc.solve.problem import MAX_SIDE, Problem

# views whose programs rank after all others: a learned pattern can describe a
# demonstration without explaining it
LAST_VIEWS = ("stamp",)
STEP_BUCKETS = (16, 32, 64, 128)  # a grid's actions are padded to one of these (one compile each)
SLOTS = 16  # grids per replay call


@dataclasses.dataclass(frozen=True)
class LanguageProgram:
    """A view's name and the paints after it."""

    view: str
    paints: tuple[Paint, ...]

    def describe(self) -> list[str]:
        return [f"VIEW({self.view})", *(paint.describe() for paint in self.paints)]

    @property
    def size(self) -> int:
        """How many rules it uses: the view (unless the input; a recolour's learned key
        counts as two rules more, so that plain paints of the input come first on a tie)
        and each paint."""
        learned_key = 2 * self.view.startswith("recolour ")
        return (self.view != "input") + learned_key + len(self.paints)

    @property
    def rank(self) -> tuple[bool, int]:
        """Where it ranks among a task's programs, lower first: a program from a view of
        :data:`LAST_VIEWS` after all others, then by :attr:`size`."""
        return self.view.startswith(LAST_VIEWS), self.size


def grid_actions(
    program: LanguageProgram,
    view: View,
    input_grid: np.ndarray,
    masks: dict[str, np.ndarray] | None = None,
) -> tuple[Int32[np.ndarray, " T"], Bool[np.ndarray, "T 30 30"]]:
    """``program`` on one grid as environment mask actions: operations ``[T]`` and masks
    ``[T, 30, 30]`` (see the module docstring). ``masks``: the view's
    :func:`~jaxarc.solve.language.paint.view_masks`, made here if ``None`` (a caller
    playing many paints on one view makes them once)."""
    steps: list[tuple[int, np.ndarray]] = []
    h, w = view.canvas.shape

    def on_canvas(mask: np.ndarray) -> np.ndarray:
        full = np.zeros((MAX_SIDE, MAX_SIDE), bool)
        full[:h, :w] = mask
        return full

    if program.view != "input":
        steps.append((ops.RESIZE, on_canvas(np.ones((h, w), bool))))
        for c in np.unique(view.canvas):
            steps.append((ops.FILL_0 + int(c), on_canvas(view.canvas == c)))
    colours = grid_colours(input_grid, view.background)
    masks = view_masks(view) if masks is None else masks
    for paint in program.paints:
        for colour, mask in paint_cells(paint, view, colours, masks):
            steps.append((ops.FILL_0 + colour, on_canvas(mask)))
    operations = np.asarray([op for op, _ in steps], np.int32).reshape(-1)
    selections = np.asarray([m for _, m in steps], bool).reshape(-1, MAX_SIDE, MAX_SIDE)
    return operations, selections


def replay_config() -> JaxArcConfig:
    """The environment the programs play: mask actions, every operation, the ARC canvas."""
    return JaxArcConfig(
        environment=EnvironmentConfig(max_episode_steps=STEP_BUCKETS[-1], episode_mode="eval"),
        dataset=UnifiedDatasetConfig(MAX_SIDE, MAX_SIDE),
        action=UnifiedActionConfig(selection_format="mask"),
    )


@functools.cache
def _replay_program():
    config = replay_config()

    def run(
        grids: Int8[Array, "G H W"],
        shapes: Int32[Array, "G 2"],
        operations: Int32[Array, "G T"],
        selections: Bool[Array, "G T H W"],
    ) -> tuple[Int8[Array, "G H W"], Int32[Array, "G 2"]]:
        def one_grid(grid, shape, operation, selection):
            taken = jnp.ones(operation.shape, jnp.bool_)  # padding steps are the no-op -1
            return replay_actions(grid, shape, MaskAction(operation, selection), taken, config)

        return jax.vmap(one_grid)(grids, shapes, operations, selections)

    return jax.jit(run)


def replay_programs(
    inputs: list[np.ndarray],
    actions: list[tuple[np.ndarray, np.ndarray]],
) -> list[np.ndarray]:
    """The grids the environment makes of ``inputs`` (true sizes) by playing each grid's
    ``(operations [T], masks [T, 30, 30])``."""
    longest = max((len(ops_) for ops_, _ in actions), default=0)
    steps = next((b for b in STEP_BUCKETS if b >= longest), None)
    if steps is None:
        raise ValueError(f"a program of {longest} actions; at most {STEP_BUCKETS[-1]}")
    made: list[np.ndarray] = []
    for first in range(0, len(inputs), SLOTS):
        group = range(first, min(first + SLOTS, len(inputs)))
        grids = np.full((SLOTS, MAX_SIDE, MAX_SIDE), -1, np.int8)
        shapes = np.ones((SLOTS, 2), np.int32)
        operations = np.full((SLOTS, steps), -1, np.int32)
        selections = np.zeros((SLOTS, steps, MAX_SIDE, MAX_SIDE), bool)
        for slot, k in enumerate(group):
            grid = inputs[k]
            grids[slot, : grid.shape[0], : grid.shape[1]] = grid
            shapes[slot] = grid.shape
            count = len(actions[k][0])
            operations[slot, :count] = actions[k][0]
            selections[slot, :count] = actions[k][1]
        out, out_shapes = _replay_program()(
            jnp.asarray(grids),
            jnp.asarray(shapes),
            jnp.asarray(operations),
            jnp.asarray(selections),
        )
        out, out_shapes = np.asarray(out), np.asarray(out_shapes)
        made += [out[s, : out_shapes[s, 0], : out_shapes[s, 1]].copy() for s in range(len(group))]
    return made


def play_on_task(
    problem: Problem, program: LanguageProgram, views: list[View]
) -> tuple[bool, list[np.ndarray]]:
    """``(solves every demonstration, test predictions)`` of ``program`` played by the
    environment on ``problem`` (``views``: the program's view of each grid, demonstration
    inputs then test inputs)."""
    inputs = [*problem.demo_inputs, *problem.test_inputs]
    actions = [grid_actions(program, view, grid) for view, grid in zip(views, inputs, strict=True)]
    made = replay_programs(inputs, actions)
    solves = all(np.array_equal(made[k], out) for k, out in enumerate(problem.demo_outputs))
    return solves, made[problem.num_demos :]
