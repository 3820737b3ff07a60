"""Objects recoloured by a learned key: each object's new colour is read off one of its
properties, the property -> colour key learned from the demonstrations.

Some tasks repaint each object of one colour by what it is: its size, its shape, the
colour a legend puts in line with it, the sides of the grid it reaches; or fill each hole
by its size. The **key** is not in the grid: the demonstrations show it, each object of
the colour in the colour it becomes. A **recolour** rule reads one property
(:data:`PROPERTIES`, tried in this order) of every object of a **source** colour (one
colour, 4- or 8-connected; of the background colour: its 4-connected pieces, or only the
holes, the pieces walled in):

* ``aligned colour``: the one colour (not the background nor the source) that the rows or
  the columns of its box hold outside it: a legend along the grid's edge names it
  (``ddf7fa4f``);
* ``size parity``: whether its number of cells is odd ("holes of odd size 7, of even size
  2": ``868de0fa``);
* ``size``: its number of cells ("size 1 becomes 3, size 2 becomes 2, ...": ``d2abd087``,
  ``6e82a1ae``, ``c0f76784``, ``e8593010``);
* ``shape``: its cells up to translation (``ea32f347``);
* ``border sides``: which of the grid's four sides its box reaches (the panels of a grid
  cut by lines, each by its place: ``272f95fa``).

The key maps each value seen to the colour its objects become in the outputs (the
background: erased). It fits when every object of the source colour becomes one colour in
its output, each value one colour in all demonstrations, and not one colour for all (a
colour map). A value no demonstration shows gets the **default**: the colour of all values
but one, seen at least twice ("objects of size 6 become 2, all others 1"); without one the
rule gives that grid nothing. ``aligned colour`` has the **self** key: each object takes
the colour its property names, seen or not (the key must map every value seen to itself).

The view ``recolour`` (:func:`recolour_keys`, :func:`recolour_grid`) learns one rule per
source colour from the demonstrations alone (the first property that fits, over the kinds
of objects in order) and paints every source object in its key's colour; paints then fix
what else changes. Its programs count the learned key as two rules more
(:attr:`~jaxarc.solve.language.program.LanguageProgram.size`): where plain paints of the
input solve a task as simply, they come first. :data:`RECOLOUR_TASKS`
names the training tasks it serves (``tests/test_language_recolour.py`` checks them).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable

import numpy as np
from jaxtyping import Bool, Int8
from scipy import ndimage

from jaxarc.solve.language.objects import EIGHT, FOUR, enclosed
from jaxarc.solve.problem import Problem

RECOLOUR_TASKS: dict[str, tuple[str, ...]] = {
    # property -> ARC-AGI-1 training tasks that a recolour by it solves alone, test
    # outputs included (tests/test_language_recolour.py checks them); d2abd087, 868de0fa,
    # 272f95fa, ddf7fa4f no other program solves, the others plain paints solve as well
    "size": ("6e82a1ae", "c0f76784", "d2abd087", "e8593010"),
    "size parity": ("868de0fa",),
    "shape": ("ea32f347",),
    "border sides": ("272f95fa",),
    "aligned colour": ("ddf7fa4f",),
}

Value = Hashable | None
Box = tuple[slice, slice]


def _one_colour(values: np.ndarray, bg: int, source: int) -> Value:
    """The one colour of ``values`` other than ``bg`` and ``source``; ``None`` if none or
    several."""
    found = set(np.unique(values).tolist()) - {bg, source}
    return int(found.pop()) if len(found) == 1 else None


def _aligned(grid: np.ndarray, bg: int, source: int, cells: np.ndarray, box: Box) -> Value:
    rows, cols = box
    outside = np.concatenate([grid[rows][~cells[rows]], grid[:, cols][~cells[:, cols]]])
    return _one_colour(outside, bg, source)


def _sides(grid: np.ndarray, bg: int, source: int, cells: np.ndarray, box: Box) -> Value:
    rows, cols = box
    h, w = grid.shape
    return (rows.start == 0, rows.stop == h, cols.start == 0, cols.stop == w)


def _shape(cells: np.ndarray) -> bytes:
    return np.asarray(cells.shape, np.int32).tobytes() + np.packbits(cells).tobytes()


PropertyFn = Callable[[np.ndarray, int, int, Bool[np.ndarray, "H W"], Box], Value]

PROPERTIES: dict[str, PropertyFn] = {
    # name -> f(grid, bg, source colour, [H, W] object cells, its box) -> value; tried in
    # this order
    "aligned colour": _aligned,
    "size parity": lambda grid, bg, source, cells, box: int(cells.sum()) % 2,
    "size": lambda grid, bg, source, cells, box: int(cells.sum()),
    "shape": lambda grid, bg, source, cells, box: _shape(cells[box]),
    "border sides": _sides,
}
SELF_PROPERTIES = ("aligned colour",)  # values that are colours: the self key
OBJECT_KINDS = ("4-connected", "8-connected")  # the objects of a colour, in the order tried
BACKGROUND_KINDS = ("4-connected", "holes")  # all the background's pieces, or those walled in


@dataclasses.dataclass(frozen=True)
class RecolourKey:
    """One source colour's learned rule: its objects' ``kind`` (:data:`OBJECT_KINDS`, or
    for the background :data:`BACKGROUND_KINDS`), the property ``prop`` and the ``key``
    ``((value, colour), ...)``; ``default``: the colour of unseen values (``-1``: none);
    ``self_key``: each object takes the colour its value names."""

    source: int
    kind: str
    prop: str
    key: tuple[tuple[Value, int], ...]
    default: int = -1
    self_key: bool = False

    def colour(self, value: Value) -> int:
        """The colour an object of property ``value`` becomes; ``-1``: none."""
        if self.self_key:
            return int(value) if value is not None else -1
        return dict(self.key).get(value, self.default)

    def describe(self) -> str:
        return f"{self.source} by {self.prop} ({self.kind})"


def _objects(grid: np.ndarray, bg: int, source: int, kind: str) -> list[np.ndarray]:
    """The ``[H, W]`` cells of every object of colour ``source`` and ``kind``."""
    cells = grid == source
    if kind == "holes":
        cells = enclosed(cells)
    labels, count = ndimage.label(cells, EIGHT if kind == "8-connected" else FOUR)
    return [labels == k for k in range(1, count + 1)]


def _values(
    grid: np.ndarray, bg: int, source: int, objects: list[np.ndarray], prop: str
) -> list[Value]:
    """Property ``prop`` of each of ``objects`` (``[H, W]`` cells) of ``grid``."""
    fn = PROPERTIES[prop]
    found = []
    for cells in objects:
        box = ndimage.find_objects(cells.astype(np.int32))[0]
        found.append(fn(grid, bg, source, cells, box))
    return found


def _fitted(
    problem: Problem, bg: int, source: int, kind: str, prop: str, objects, targets
) -> RecolourKey | None:
    """The key of ``prop`` when it fits the demonstrations' ``objects`` and ``targets``."""
    pairs: dict[Value, int] = {}
    for grid, cells_list, row in zip(problem.demo_inputs, objects, targets, strict=True):
        for value, target in zip(_values(grid, bg, source, cells_list, prop), row, strict=True):
            if pairs.setdefault(value, target) != target:
                return None
    key = tuple(pairs.items())
    if prop in SELF_PROPERTIES:
        if all(value is not None and value == colour for value, colour in key):
            return RecolourKey(source, kind, prop, key, self_key=True)
        return None
    counts = Counter(pairs.values()).most_common()
    if len(counts) < 2:  # every object one colour: a colour map
        return None
    others = sum(1 for colour in pairs.values() if colour != counts[0][0])
    default = counts[0][0] if others == 1 and counts[0][1] >= 2 else -1
    return RecolourKey(source, kind, prop, key, default)


def _learn(problem: Problem, bg: int, source: int) -> RecolourKey | None:
    """The rule of ``source`` objects: the first property (then kind) whose key fits the
    demonstrations; ``None``: none does."""
    kinds = BACKGROUND_KINDS if source == bg else OBJECT_KINDS
    shown = {}  # kind -> (objects, the colour each becomes) per demonstration
    for kind in kinds:
        objects = [_objects(i, bg, source, kind) for i in problem.demo_inputs]
        targets = []
        for cells_list, out in zip(objects, problem.demo_outputs, strict=True):
            colours = [np.unique(out[cells]) for cells in cells_list]
            if any(c.size != 1 for c in colours):
                break
            targets.append([int(c[0]) for c in colours])
        else:
            if any(t != source for row in targets for t in row):
                shown[kind] = (objects, targets)
    for prop in PROPERTIES:
        for kind, (objects, targets) in shown.items():
            rule = _fitted(problem, bg, source, kind, prop, objects, targets)
            if rule is not None:
                return rule
    return None


def recolour_keys(problem: Problem, bg: int) -> list[RecolourKey]:
    """One learned rule per source colour (a colour of every demonstration input) that
    has one; ``[]`` when outputs differ in shape from their inputs."""
    inputs = problem.demo_inputs
    if any(i.shape != o.shape for i, o in zip(inputs, problem.demo_outputs, strict=True)):
        return []
    keys = []
    for source in range(10):
        if all((i == source).any() for i in inputs):
            rule = _learn(problem, bg, source)
            if rule is not None:
                keys.append(rule)
    return keys


def recolour_grid(
    grid: Int8[np.ndarray, "H W"], bg: int, keys: list[RecolourKey]
) -> np.ndarray | None:
    """``grid`` with each rule's source objects painted in their key's colour (all rules
    read the input); ``None`` when an object's value has no colour."""
    grid = np.asarray(grid, np.int8)
    out = grid.copy()
    for rule in keys:
        objects = _objects(grid, bg, rule.source, rule.kind)
        for cells, value in zip(
            objects, _values(grid, bg, rule.source, objects, rule.prop), strict=True
        ):
            colour = rule.colour(value)
            if colour < 0:
                return None
            out[cells] = colour
    return out


def describe_keys(keys: list[RecolourKey]) -> str:
    """The view's name: ``recolour 5 by size (4-connected), ...``."""
    return "recolour " + ", ".join(rule.describe() for rule in keys)
