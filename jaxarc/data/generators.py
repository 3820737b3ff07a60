"""Generated task sources (``gen/...``): a new random task every episode, made on device.

``make_generator("gen/easy")`` returns a :class:`GeneratorSource`, an
:class:`~jaxarc.data.source.AbstractTaskSource` usable wherever a task bank is (e.g.
``arc_reset(key, config, make_generator("gen/easy"))``). Each call of
:meth:`GeneratorSource.sample_task` draws a family (for mixtures), the task's rule
parameters (colours, direction) and ``P + Q`` pairs following that rule, all with
``jax.random`` inside compiled code. The family is never part of the task: an agent must
infer the rule from the demonstration pairs.

Selection format: ``gen/easy`` and its four flood families are played with **point**
actions (one ``FLOOD_c`` per changing region); ``rot180``, ``move``, ``flip`` and ``rotate``
need **bbox** actions (they act on a rectangle). ``gen/medium`` mixes all eight families
(played with bbox actions; a 1x1 box is a point), ``gen/geometric`` the four that act on a
rectangle. ``gen/reshape`` mixes ``crop`` and ``mirror_tile``
(:mod:`jaxarc.data.shape_families`), whose output has another shape than the input (bbox
actions, the clipboard and RESIZE). Every family is also a source of its own
(``gen/recolour``, ..., ``gen/rotate``, ``gen/crop``, ``gen/mirror_tile``). ``gen/ladder-1``
to ``gen/ladder-3`` (one cell to recolour, 4x4 canvas) and ``gen/ladder-4`` (``recolour``
on 5x5) are the generated rungs of the difficulty ladder (:mod:`jaxarc.data.ladder`), each
with its own default canvas.

Generalisation: ``make_generator("gen/easy", canvas=(12, 12), min_side=10)`` draws grids of
10 to 12 cells a side, sizes a policy trained on the 8x8 canvas never saw. With
``family_as_index=True`` a source returns the family's index (into ``families``) as the
episode's task index (``ArcState.task_index``, never part of the observation), so an
evaluation can score each family. :func:`oracle_actions` gives a short
solution of an instance as bbox tuples ``(operation, r1, c1, r2, c2)`` (a 1x1 box is a
point), SUBMIT last.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Int32, PRNGKeyArray, PyTree

from jaxarc.data import generator_families as same_shape
from jaxarc.data.generator_families import (
    DRAW_PLANES,
    EASY_FAMILIES,
    GEOMETRIC_FAMILIES,
    MEDIUM_FAMILIES,
    MIN_CANVAS_SIDE,
    GeneratedPair,
    task_params_from_uniforms,
)
from jaxarc.data.shape_families import SHAPE_FAMILIES, SHAPE_FAMILY_MIN_SIDE
from jaxarc.data.source import AbstractTaskSource, Task
from jaxarc.grid import operation_ids as ops

GENERATOR_PREFIX = "gen/"
FAMILIES = {**same_shape.FAMILIES, **SHAPE_FAMILIES}  # each a gen/<name> source
ALL_FAMILIES = {**same_shape.ALL_FAMILIES, **SHAPE_FAMILIES}  # and the ladder's one-cell ones
FAMILY_MIN_SIDE = {**same_shape.FAMILY_MIN_SIDE, **SHAPE_FAMILY_MIN_SIDE}
RETRIES = 2  # candidates drawn per pair; the first valid one is kept
LADDER_ONE_CELL = (
    "mark_one",
    "recolour_cell_two",
    "recolour_cell",
)  # the ladder's one-cell families


class GeneratorSource(AbstractTaskSource):
    """Random tasks from a mixture of families (uniform over ``families``)."""

    families: tuple[str, ...] = eqx.field(static=True)
    canvas: tuple[int, int] = eqx.field(static=True, default=(8, 8))
    num_demos: int = eqx.field(static=True, default=4)
    num_tests: int = eqx.field(static=True, default=1)
    name: str = eqx.field(static=True, default="gen/custom")
    min_side: int = eqx.field(static=True, default=0)  # smallest grid side (0: family's own)
    family_as_index: bool = eqx.field(static=True, default=False)  # see the module docstring

    def __check_init__(self):
        unknown = [f for f in self.families if f not in ALL_FAMILIES]
        if not self.families or unknown:
            raise ValueError(f"unknown generator families {unknown}; known: {sorted(ALL_FAMILIES)}")
        side = max(MIN_CANVAS_SIDE, *(FAMILY_MIN_SIDE[f] for f in self.families))
        if min(self.canvas) < side:
            raise ValueError(
                f"generator canvas {self.canvas} is too small (at least {side}x{side})"
            )
        if self.num_demos < 2 or self.num_tests < 1:
            raise ValueError("generators need at least 2 demonstration pairs and 1 test pair")
        if self.min_side > min(self.canvas):
            raise ValueError(f"min_side {self.min_side} exceeds the canvas {self.canvas}")

    @property
    def canvas_shape(self) -> tuple[int, int]:
        return self.canvas

    @property
    def max_demos(self) -> int:
        return self.num_demos

    @property
    def max_tests(self) -> int:
        return self.num_tests

    def sample_task(
        self, key: PRNGKeyArray, task_index: Int32[Array, ""]
    ) -> tuple[Task, Int32[Array, ""]]:
        task, family = self.sample_task_and_family(key)
        return task, family if self.family_as_index else jnp.asarray(-1, dtype=jnp.int32)

    def sample_task_and_family(self, key: PRNGKeyArray) -> tuple[Task, Int32[Array, ""]]:
        """A task and the index (into :attr:`families`) of the family that made it."""
        num_pairs = self.num_demos + self.num_tests
        # one PRNG call for the whole task (each threefry call site costs compile time)
        uniforms = jax.random.uniform(key, (num_pairs, RETRIES, DRAW_PLANES + 1, *self.canvas))
        draws = uniforms[0, 0, DRAW_PLANES].reshape(-1)[:11]  # the task-level draws
        pair_uniforms = uniforms[:, :, :DRAW_PLANES]
        num_families = len(self.families)
        family = jnp.minimum(jnp.floor(draws[0] * num_families), num_families - 1)
        family = family.astype(jnp.int32)
        params = task_params_from_uniforms(draws[1:], self.min_side)

        def one_family(name: str):
            generate = ALL_FAMILIES[name]

            def pairs(uniforms, params):
                make = lambda u: generate(u, params, self.canvas)
                candidates = jax.vmap(jax.vmap(make))(uniforms)
                first_valid = jnp.argmax(candidates.valid, axis=1)
                return jax.tree.map(
                    lambda x: jnp.take_along_axis(
                        x, first_valid.reshape((-1,) + (1,) * (x.ndim - 1)), axis=1
                    )[:, 0],
                    candidates,
                )

            return pairs

        branches = [one_family(name) for name in self.families]
        if len(branches) == 1:
            pairs = branches[0](pair_uniforms, params)
        else:
            pairs = jax.lax.switch(family, branches, pair_uniforms, params)
        return _task_from_pairs(pairs, self.num_demos), family

    def episode_store(self, task: Task) -> PyTree:
        return task  # small on a generator canvas: the state keeps the task itself

    def episode_task(self, store: PyTree, task_index: Int32[Array, ""]) -> Task:
        return store


def _task_from_pairs(pairs: GeneratedPair, num_demos: int) -> Task:
    num_tests = pairs.input.shape[0] - num_demos
    return Task(
        demo_inputs=pairs.input[:num_demos],
        demo_outputs=pairs.output[:num_demos],
        demo_input_shapes=pairs.input_shape[:num_demos],
        demo_output_shapes=pairs.output_shape[:num_demos],
        num_demos=jnp.asarray(num_demos, dtype=jnp.int32),
        test_inputs=pairs.input[num_demos:],
        test_outputs=pairs.output[num_demos:],
        test_input_shapes=pairs.input_shape[num_demos:],
        test_output_shapes=pairs.output_shape[num_demos:],
        num_tests=jnp.asarray(num_tests, dtype=jnp.int32),
        test_scored=jnp.ones((num_tests,), dtype=bool),
    )


MIXTURES: dict[str, tuple[str, ...]] = {
    "easy": EASY_FAMILIES,
    "medium": MEDIUM_FAMILIES,
    "geometric": GEOMETRIC_FAMILIES,
    "reshape": tuple(SHAPE_FAMILIES),
    # the difficulty ladder's generated rungs (jaxarc.data.ladder), each on its own canvas
    "ladder-1": ("mark_one",),
    "ladder-2": ("recolour_cell_two",),
    "ladder-3": ("recolour_cell",),
    "ladder-4": ("recolour",),
}
DEFAULT_CANVAS: tuple[int, int] = (8, 8)
CANVASES: dict[str, tuple[int, int]] = {
    "ladder-1": (4, 4),
    "ladder-2": (4, 4),
    "ladder-3": (4, 4),
    "ladder-4": (5, 5),
}
"""Sources whose default canvas is not :data:`DEFAULT_CANVAS` (by short name)."""


def generator_names() -> tuple[str, ...]:
    """Every ``gen/...`` name :func:`make_generator` accepts."""
    return tuple(GENERATOR_PREFIX + n for n in (*MIXTURES, *FAMILIES))


def generator_families(name: str) -> tuple[str, ...]:
    """The families a ``gen/...`` name mixes (one for a single-family source)."""
    short = name.removeprefix(GENERATOR_PREFIX)
    if not name.startswith(GENERATOR_PREFIX) or (short not in MIXTURES and short not in FAMILIES):
        raise ValueError(f"unknown generator {name!r}; known: {', '.join(generator_names())}")
    return MIXTURES.get(short, (short,))


def generator_canvas(name: str) -> tuple[int, int]:
    """The canvas ``make_generator(name)`` uses by default (``(8, 8)`` but for the ladder)."""
    generator_families(name)  # unknown names are an error
    return CANVASES.get(name.removeprefix(GENERATOR_PREFIX), DEFAULT_CANVAS)


def make_generator(
    name: str,
    canvas: tuple[int, int] | None = None,
    num_demos: int = 4,
    num_tests: int = 1,
    *,
    min_side: int = 0,
    family_as_index: bool = False,
) -> GeneratorSource:
    """The generator source called ``name`` (``"gen/easy"``, ``"gen/medium"``,
    ``"gen/rot180"``, ``"gen/ladder-1"``, ...) on ``canvas`` (default:
    :func:`generator_canvas`); ``min_side`` and ``family_as_index``: see the module docstring."""
    families = generator_families(name)
    return GeneratorSource(
        families=families,
        canvas=tuple(generator_canvas(name) if canvas is None else canvas),
        num_demos=num_demos,
        num_tests=num_tests,
        name=name,
        min_side=min_side,
        family_as_index=family_as_index,
    )


# ---------------------------------------------------------------- oracle (host side, NumPy)

BboxTuple = tuple[int, int, int, int, int]


def _components(mask: np.ndarray) -> list[tuple[int, int]]:
    """One cell (the first in row-major order) of each 4-connected component of ``mask``."""
    seen = np.zeros_like(mask, dtype=bool)
    firsts = []
    for r, c in zip(*np.nonzero(mask), strict=True):
        if seen[r, c]:
            continue
        firsts.append((int(r), int(c)))
        stack = [(r, c)]
        while stack:
            y, x = stack.pop()
            if not (0 <= y < mask.shape[0] and 0 <= x < mask.shape[1]):
                continue
            if seen[y, x] or not mask[y, x]:
                continue
            seen[y, x] = True
            stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
    return firsts


def oracle_actions(family: str, input_grid: np.ndarray, output_grid: np.ndarray) -> list[BboxTuple]:
    """A bbox action sequence turning ``input_grid`` into ``output_grid``, as short as the
    family's table says (:mod:`jaxarc.data.generator_families`,
    :mod:`jaxarc.data.shape_families`).

    Grids are cropped (no ``-1`` padding). ``family`` names the rule that made the pair.
    """
    inp, out = np.asarray(input_grid), np.asarray(output_grid)
    h, w = inp.shape
    whole = (0, 0, h - 1, w - 1)
    submit = (ops.SUBMIT, 0, 0, 0, 0)
    if family == "rot180":
        return [(ops.FLIP_LR, *whole), (ops.FLIP_TB, *whole), submit]
    if family == "flip":
        op = ops.FLIP_LR if np.array_equal(out, inp[:, ::-1]) else ops.FLIP_TB
        return [(op, *whole), submit]
    if family == "rotate":
        op = ops.ROTATE_CW if np.array_equal(out, np.rot90(inp, -1)) else ops.ROTATE_CCW
        return [(op, *whole), submit]
    if family in ("recolour", "erase", "fill_background", "fill_holes", *LADDER_ONE_CELL):
        changed = inp != out
        actions = []
        for r, c in _components(changed):
            actions.append((ops.FLOOD_0 + int(out[r, c]), r, c, r, c))
        return [*actions, submit]
    if family == "move":
        before = np.argwhere(inp != 0).mean(axis=0)
        after = np.argwhere(out != 0).mean(axis=0)
        d_row, d_col = np.round(after - before).astype(int)
        if d_row:
            op, steps = (ops.MOVE_DOWN if d_row > 0 else ops.MOVE_UP), abs(d_row)
        else:
            op, steps = (ops.MOVE_RIGHT if d_col > 0 else ops.MOVE_LEFT), abs(d_col)
        return [(op, *whole)] * steps + [submit]
    if family == "crop":
        rows, cols = np.nonzero(inp)
        r1, c1, r2, c2 = (int(x) for x in (rows.min(), cols.min(), rows.max(), cols.max()))
        return [
            (ops.COPY, r1, c1, r2, c2),
            (ops.RESIZE, 0, 0, r2 - r1, c2 - c1),
            (ops.PASTE, 0, 0, 0, 0),
            submit,
        ]
    if family == "mirror_tile":
        beside = out.shape[1] == 2 * w
        r, c = (0, w) if beside else (h, 0)
        out_h, out_w = out.shape
        return [
            (ops.COPY, *whole),
            (ops.RESIZE, 0, 0, out_h - 1, out_w - 1),
            (ops.PASTE, r, c, r, c),
            (ops.FLIP_LR if beside else ops.FLIP_TB, r, c, out_h - 1, out_w - 1),
            submit,
        ]
    raise ValueError(f"no oracle for family {family!r}; known: {sorted(ALL_FAMILIES)}")
