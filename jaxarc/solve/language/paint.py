"""Paints and the cover that fits them: content rules chosen so that every demonstration
input becomes its output.

A **paint** writes colours on the cells a mask rule chooses, on every grid of a task:

* ``fill``: one colour rule's colour (:mod:`jaxarc.solve.language.colours`) on the mask;
* ``self``: for each colour ``c``, colour ``c`` on the rule's colour-``c`` mask (a template
  such as ``"ray down from colour {c}"``: every colour extends its own rays); ``self fg``
  leaves out the background colour;
* ``copy``: the view's source colours on the mask (keep only what the rule chooses);
* ``map``: a colour map fitted to the demonstrations, each colour ``a`` of the source that
  always becomes ``b`` in the outputs written as ``b`` (``colour`` holds ``"a>b ..."``).

A paint is **safe** on a task when, on every demonstration, each cell it writes already has
that colour in the output: a safe paint never undoes another. So a set of safe paints whose
cells together hold every cell where the view's canvas differs from the output turns every
demonstration input into its output, in any order. :func:`find_cover` finds such a set
greedily (the paint that fixes the most wrong cells first, general rules before particular
ones on a tie), as a set cover; a task's content is thereby chosen by how the rules fit all
its demonstrations at once, never one demonstration alone.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from threadpoolctl import threadpool_limits

from jaxarc.solve.language.colours import COLOUR_RULES
from jaxarc.solve.language.masks import FAMILY_NAMES, colour_template, grid_masks
from jaxarc.solve.language.view import View

PAINT_TASKS: dict[str, tuple[str, ...]] = {
    # paint kind -> ARC-AGI-1 training tasks whose simplest program uses one
    "fill": ("00d62c1b", "0ca9ddb6", "178fcbfb"),
    "self": ("3c9b0459", "6150a2bd", "67a3c6ac"),
    "self fg": ("1f876c06", "22168020", "22eb0ac0"),
    "copy": ("63613498", "694f12f3", "776ffc46"),
    "map": ("0d3d703e", "25d8a9c8", "54d9e175"),
}
SELF_KINDS = ("self fg", "self")  # the order a template's self paints are offered in
MAX_PAINTS = 8  # a cover with more paints is not kept (it describes the demonstrations)


def one_blas_thread() -> threadpool_limits:
    """A context in which NumPy's BLAS runs on one thread: the cover's matrix products are
    small (rules x cells), and BLAS threads that wait for work by spinning slow them, and
    every other process on a busy CPU, by two orders of magnitude."""
    return threadpool_limits(limits=1, user_api="blas")


@dataclasses.dataclass(frozen=True)
class Paint:
    """``kind`` (``fill``, ``self``, ``self fg``, ``copy`` or ``map``), the mask rule (a
    template with ``{c}`` for ``self``) and, for ``fill``, the colour rule (for ``map``,
    the map)."""

    kind: str
    mask: str
    colour: str = ""
    within: int = -1  # fill and self: only on the source's cells of this colour (-1: all)

    def describe(self) -> str:
        mask = self.mask if self.within < 0 else f"{self.mask} & colour {self.within}"
        if self.kind == "fill":
            return f"FILL({mask}, {self.colour})"
        if self.kind == "map":
            return f"MAP({self.colour})"
        return f"{self.kind.upper()}({mask})"


def view_masks(view: View, families: tuple[str, ...] = FAMILY_NAMES) -> dict[str, np.ndarray]:
    """The masks a paint may use on ``view``: every rule of
    :mod:`jaxarc.solve.language.masks` on its source, and the view's own."""
    return {**grid_masks(view.source, view.background, families), **view.masks}


def paint_cells(
    paint: Paint, view: View, colours: np.ndarray, masks: dict[str, np.ndarray] | None = None
) -> list[tuple[int, np.ndarray]]:
    """What ``paint`` writes on one grid: ``(colour, [h, w] mask)`` per FILL, in order.
    ``colours``: the grid's :func:`~jaxarc.solve.language.colours.grid_colours`."""
    masks = view_masks(view) if masks is None else masks
    empty = np.zeros(view.canvas.shape, bool)
    within = view.source == paint.within if paint.within >= 0 else np.ones_like(empty)
    if paint.kind == "fill":
        colour = int(colours[COLOUR_RULES.index(paint.colour)])
        mask = masks.get(paint.mask, empty) & within
        return [(colour, mask)] if colour >= 0 and mask.any() else []
    if paint.kind == "copy":
        mask = masks.get(paint.mask, empty)
        chosen = [(c, mask & (view.source == c)) for c in range(10)]
        return [(c, cells) for c, cells in chosen if cells.any()]
    if paint.kind == "map":
        pairs = [(int(a), int(b)) for a, b in (item.split(">") for item in paint.colour.split())]
        return [(b, view.source == a) for a, b in pairs if (view.source == a).any()]
    if paint.kind not in ("self", "self fg"):
        raise ValueError(f"unknown paint kind {paint.kind!r}")
    bg = view.background
    found = []
    for c in range(10):
        if paint.kind == "self fg" and c == bg:
            continue
        mask = masks.get(paint.mask.format(c=c), empty) & within
        if mask.any():
            found.append((c, mask))
    return found


def find_cover(
    views: list[View],
    outputs: list[np.ndarray],
    colours: list[np.ndarray],
    *,
    banned: tuple[Paint, ...] = (),
    families: tuple[str, ...] = FAMILY_NAMES,
    min_support: int = 1,
    tables: CoverTables | None = None,
) -> list[Paint] | None:
    """Paints that turn every demonstration's canvas into its output, in the order they
    are played, or ``None``. ``views``, ``outputs``, ``colours``: one per demonstration
    (the view of its input, its output, the colour rules' colours on its input);
    ``banned`` paints are not used (for a second, different cover); only the mask rules
    of ``families`` (:data:`~jaxarc.solve.language.masks.MASK_FAMILIES`) are. With
    ``min_support`` ``k``, every paint but the colour map must fix cells of at least ``k``
    demonstrations (a rule seen at work once describes a demonstration, it does not explain
    it). ``tables``: the :class:`CoverTables` of the same arguments, to share between calls.

    The cover is built from the last paint back (layers): the last paint must be safe;
    a paint before it may write wrong colours only on cells that a later paint writes
    again (rows of one colour over columns of another)."""
    if tables is None:
        tables = CoverTables(views, outputs, colours, families)
    if not tables.wrong.any():
        return []
    later = np.zeros_like(tables.wrong)  # cells the paints chosen so far (played later) write
    remaining = tables.wrong.copy()
    chosen: list[Paint] = []
    while remaining.any() and len(chosen) < MAX_PAINTS:
        paints, writes = tables.safe_paints(later, remaining)
        support = tables.support(writes) if min_support > 1 else None  # (1: any paint fixes one)
        keep = [
            k
            for k, paint in enumerate(paints)
            if paint not in banned
            and (support is None or paint.kind == "map" or support[k] >= min_support)
        ]
        if not keep:
            return None
        gains = (writes[keep] & remaining[None]).sum(1)
        best = int(gains.argmax())  # the first of the most: general rules come first
        if gains[best] == 0:
            return None
        chosen.append(paints[keep[best]])
        later |= writes[keep[best]]
        remaining &= ~writes[keep[best]]
    return None if remaining.any() else chosen[::-1]


class CoverTables:
    """Every mask rule on every demonstration, the demonstrations' cells concatenated:
    ``cells [R, N]`` (rule ``r`` chooses cell ``n``), the outputs, sources and the colour
    rules' colours per cell ``[N, Q]``, and which demonstration holds each cell ``[N, D]``
    (one-hot). Built once per view of a task; :func:`find_cover` may share it."""

    def __init__(self, views, outputs, colours, families: tuple[str, ...] = FAMILY_NAMES):
        all_masks = [view_masks(v, families) for v in views]
        names = list(dict.fromkeys(n for masks in all_masks for n in masks))  # simplest first
        parts = []
        for masks, out in zip(all_masks, outputs, strict=True):
            empty = np.zeros(out.size, bool)
            parts.append(np.stack([masks[n].reshape(-1) if n in masks else empty for n in names]))
        cells = np.concatenate(parts, axis=1)
        # a rule that chooses no cell of any demonstration can fix nothing, and as a member
        # of a self paint's template it writes nothing: only the others are kept
        chosen = cells.any(1)
        self.names = [n for n, keep in zip(names, chosen.tolist(), strict=True) if keep]
        self.index = {n: k for k, n in enumerate(self.names)}
        self.cells = cells[chosen]
        self.out = np.concatenate([out.reshape(-1) for out in outputs]).astype(np.int32)
        self.source = np.concatenate([v.source.reshape(-1) for v in views]).astype(np.int32)
        self.wrong = np.concatenate(
            [(v.canvas != out).reshape(-1) for v, out in zip(views, outputs, strict=True)]
        )
        self.demo_of_cell = np.concatenate(
            [
                np.full((out.size, len(outputs)), d) == np.arange(len(outputs))
                for d, out in enumerate(outputs)
            ]
        ).astype(np.float32)  # [N, D]
        self.colour_of_cell = np.concatenate(
            [np.repeat(c[None], out.size, 0) for c, out in zip(colours, outputs, strict=True)]
        )  # [N, Q]
        self.defined = np.all([c >= 0 for c in colours], axis=0)  # [Q]
        self.background = views[0].background
        self.used = self.cells.any(1)
        self.cells_f = self.cells.astype(np.float32)
        grid_rules = list(range(10, len(COLOUR_RULES)))
        self.checks = np.concatenate(  # [N, K]: a write of each colour would be wrong here
            [
                self.out[:, None] != np.arange(10)[None],
                (self.out != self.source)[:, None],
                self.out[:, None] != self.colour_of_cell[:, grid_rules],
            ],
            axis=1,
        ).astype(np.float32)
        # [R, K] per colour of the source: the wrong writes on that colour's cells
        self.colour_counts = {
            int(c): self.cells_f[:, self.source == c] @ self.checks[self.source == c]
            for c in np.unique(self.source)
        }
        self.wrong_counts = sum(self.colour_counts.values())  # [R, K]
        # the templates in the order of their first rule (kept or not: the order breaks
        # ties between self paints), each with its kept rules
        self.templates: dict[str, list[tuple[int, int]]] = {}
        for name in names:
            template, colour = colour_template(name)
            if template is not None:
                members = self.templates.setdefault(template, [])
                if name in self.index:
                    members.append((colour, self.index[name]))
        self._self_tables = {kind: self._self_table(kind) for kind in SELF_KINDS}
        self._template_cells = np.stack([table[3] for table in self._self_tables.values()])
        self._template_cells_f = self._template_cells.astype(np.float32)  # [kinds, T, N]

    def _self_table(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For the self paints of ``kind``, over the templates in order: the members'
        colours, rows and templates (flat), and each template's cells ``[T, N]`` (the union
        of its members'; no cell where it has no member)."""
        colours, rows, owners = [], [], []
        cells = np.zeros((len(self.templates), self.out.size), bool)
        for t, members in enumerate(self.templates.values()):
            for c, k in members:
                if not (kind == "self fg" and c == self.background):
                    colours.append(c)
                    rows.append(k)
                    owners.append(t)
                    cells[t] |= self.cells[k]
        as_index = functools.partial(np.asarray, dtype=np.int64)
        return as_index(colours), as_index(rows), as_index(owners), cells

    def support(self, writes: np.ndarray) -> np.ndarray:
        """``[P]``: how many demonstrations each paint's cells ``writes [P, N]`` fix (cells
        that the view's canvas holds wrong)."""
        if writes.shape[0] == 0:
            return np.zeros(0, np.int64)
        fixed = (writes & self.wrong[None]).astype(np.float32) @ self.demo_of_cell
        return (fixed > 0.5).sum(1)

    def _bad_rows(self, later: np.ndarray) -> np.ndarray:
        """``[R, 11 + grid rules]``: whether each rule chooses a cell outside ``later``
        where writing colour 0-9, the source's colour, or each grid rule's colour would be
        wrong. The counts over all cells are one matrix product, made once; the cells of
        ``later`` are taken off them."""
        counts = self.wrong_counts
        if later.any():
            counts = counts - self.cells_f[:, later] @ self.checks[later]
        return counts > 0.5

    def safe_paints(
        self, later: np.ndarray, remaining: np.ndarray
    ) -> tuple[list[Paint], np.ndarray]:
        """The paints that write no wrong colour outside ``later`` (cells a later paint
        writes again) and fix at least one ``remaining`` cell, and the cells each writes
        ``[P, N]``: the map, then self paints, copies, fills (constant colours before the
        grid's), then fills and self paints kept to the cells of one colour."""
        free = ~later
        paints: list[Paint] = []
        blocks: list[np.ndarray] = []  # the cells the paints write, a block [p, N] at a time
        colour_map = self._colour_map(free)
        if colour_map:
            written = np.isin(self.source, [a for a, _ in colour_map])
            if (written & remaining).any():
                paints.append(
                    Paint("map", "colour map", " ".join(f"{a}>{b}" for a, b in colour_map))
                )
                blocks.append(written[None])
        bad = self._bad_rows(later)  # [R, 10 + 1 + grid rules]
        gains = self.cells_f @ remaining.astype(np.float32)  # [R]
        useful = gains > 0.5
        self._self_paints(bad, None, remaining, -1, paints, blocks)
        copies = np.flatnonzero(useful & ~bad[:, 10])
        paints.extend(Paint("copy", self.names[k]) for k in copies)
        blocks.append(self.cells[copies])
        self._fills(self._safe_fills(bad) & useful[:, None], None, -1, paints, blocks)
        # kept to the source's cells of one colour
        colours = np.unique(self.source)
        insides = self.source[None] == colours[:, None]  # [C, N]
        parts = insides & remaining[None]
        live = parts.any(1)
        gains_here = self.cells_f @ parts[live].T.astype(np.float32)  # [R, C']
        useful_here = (gains_here > 0.5) & (gains[:, None] > gains_here + 0.5)
        colours, insides = colours[live], insides[live]
        live = useful_here.any(0)
        if live.any():
            colours, insides, useful_here = colours[live], insides[live], useful_here[:, live]
            for j, (colour, inside) in enumerate(zip(colours, insides, strict=True)):
                # the cells a paint kept to a colour writes for good: that colour's cells
                # outside the later paints
                counts = self.colour_counts[int(colour)]
                taken = inside & later
                if taken.any():
                    counts = counts - self.cells_f[:, taken] @ self.checks[taken]
                bad_here = counts > 0.5
                self._self_paints(bad_here, inside, remaining, int(colour), paints, blocks)
                safe = self._safe_fills(bad_here) & useful_here[:, j, None]
                self._fills(safe, inside, int(colour), paints, blocks)
        if not paints:
            return [], np.zeros((0, self.out.size), bool)
        return paints, np.concatenate(blocks)

    def _fills(
        self,
        safe: np.ndarray,
        inside: np.ndarray | None,
        within: int,
        paints: list[Paint],
        blocks: list[np.ndarray],
    ) -> None:
        """Each rule's first safe fill by ``safe [R, Q]``, kept to the ``inside`` cells
        (``None``: all), appended to ``paints`` and its cells to ``blocks``."""
        rules = np.flatnonzero(safe.any(1))
        firsts = safe[rules].argmax(1)
        paints.extend(
            Paint("fill", self.names[k], COLOUR_RULES[q], within)
            for k, q in zip(rules.tolist(), firsts.tolist(), strict=True)
        )
        blocks.append(self.cells[rules] if inside is None else self.cells[rules] & inside)

    def _safe_fills(self, bad: np.ndarray) -> np.ndarray:
        """``[R, Q]``: fills that write no wrong cell by ``bad`` and whose colour every
        demonstration defines."""
        safe = np.zeros((len(self.names), len(COLOUR_RULES)), bool)
        for q in np.flatnonzero(self.defined):
            safe[:, q] = ~bad[:, q] if q < 10 else ~bad[:, 11 + q - 10]
        return safe & self.used[:, None]

    def _self_paints(
        self,
        bad: np.ndarray,
        inside: np.ndarray | None,
        remaining: np.ndarray,
        within: int,
        paints: list[Paint],
        blocks: list[np.ndarray],
    ) -> None:
        """Each safe self paint (``self fg`` and ``self``) kept to the ``inside`` cells
        (``None``: all) that fixes a ``remaining`` cell: per template in order, ``self fg``
        first; a paint is safe when none of its members (rule ``k`` of colour ``c``) is
        ``bad[k, c]``."""
        count = len(self.templates)
        if count == 0:
            return
        target = remaining if inside is None else remaining & inside
        fixes = self._template_cells_f @ target.astype(np.float32) > 0.5  # [kinds, T]
        chosen = []  # [kinds, T]
        for (colours, rows, owners, _), fixing in zip(
            self._self_tables.values(), fixes, strict=True
        ):
            members = np.bincount(owners, minlength=count)
            wrong = np.bincount(owners, weights=bad[rows, colours], minlength=count)
            chosen.append((members > 0) & (wrong < 0.5) & fixing)
        templates, kinds = np.nonzero(np.asarray(chosen).T)  # template-major, kinds in order
        names = list(self.templates)
        paints.extend(
            Paint(SELF_KINDS[k], names[t], within=within)
            for t, k in zip(templates.tolist(), kinds.tolist(), strict=True)
        )
        written = self._template_cells[kinds, templates]
        blocks.append(written if inside is None else written & inside)

    def _colour_map(self, free: np.ndarray) -> list[tuple[int, int]]:
        """``[(a, b), ...]``: the colours ``a`` whose every source cell outside a later
        paint is ``b != a`` in the output."""
        pairs = []
        for a in np.unique(self.source):
            becomes = np.unique(self.out[(self.source == a) & free])
            if becomes.size == 1 and becomes[0] != a:
                pairs.append((int(a), int(becomes[0])))
        return pairs
