"""Selection bounding boxes and affine source-coordinate maps over a fixed canvas.

MOVE, ROTATE, FLIP, PASTE and COPY all read each destination cell ``(r, c)`` from one source
cell ``(row0 + a*r + b*c, col0 + d*r + e*c)`` with ``a, b, d, e`` in ``{-1, 0, 1}``, inside a
destination rectangle. A :class:`CoordinateMap` holds those scalars (chosen per environment,
which is cheap), and :meth:`CoordinateMap.gather` applies them with one gather over the canvas.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, Bool, Int, Int8, Int32

from jaxarc.grid.lanes import where_flagged


class SelectionBox(eqx.Module):
    """Inclusive bounding box of a mask; an empty mask gives ``top > bottom``, ``left > right``."""

    top: Int32[Array, ""]
    bottom: Int32[Array, ""]
    left: Int32[Array, ""]
    right: Int32[Array, ""]

    @classmethod
    def of(cls, mask: Bool[Array, "H W"]) -> SelectionBox:
        """The bounding box of the ``True`` cells of ``mask``."""
        height, width = mask.shape
        row_index = jnp.arange(height, dtype=jnp.int32)
        col_index = jnp.arange(width, dtype=jnp.int32)
        row_hit = jnp.any(mask, axis=1)
        col_hit = jnp.any(mask, axis=0)
        return cls(
            top=jnp.min(jnp.where(row_hit, row_index, jnp.int32(height))),
            bottom=jnp.max(jnp.where(row_hit, row_index, jnp.int32(-1))),
            left=jnp.min(jnp.where(col_hit, col_index, jnp.int32(width))),
            right=jnp.max(jnp.where(col_hit, col_index, jnp.int32(-1))),
        )

    @property
    def height(self) -> Int32[Array, ""]:
        return self.bottom - self.top + 1

    @property
    def width(self) -> Int32[Array, ""]:
        return self.right - self.left + 1

    def mask(self, height: int, width: int) -> Bool[Array, "H W"]:
        """Which cells of an ``height x width`` canvas lie inside the box."""
        rows = jnp.arange(height, dtype=jnp.int32)
        cols = jnp.arange(width, dtype=jnp.int32)
        in_rows = (rows >= self.top) & (rows <= self.bottom)
        in_cols = (cols >= self.left) & (cols <= self.right)
        return in_rows[:, None] & in_cols[None, :]


class CoordinateMap(eqx.Module):
    """Destination ``(r, c)`` reads source ``(row0 + rr*r + rc*c, col0 + cr*r + cc*c)``.

    Only destinations inside the half-open rectangle ``[rect_top, rect_bottom) x
    [rect_left, rect_right)`` and with an in-canvas source are mapped. ``rr, rc, cr, cc`` are
    those of a flip or a rotation; :meth:`gather` applies that part statically (one of five
    fixed variants of the square-padded canvas, chosen per environment by ``variant``) and the
    rest as one shift of the flattened canvas by ``row_shift * L + col_shift``.
    """

    row0: Int32[Array, ""]
    rr: Int32[Array, ""]
    rc: Int32[Array, ""]
    col0: Int32[Array, ""]
    cr: Int32[Array, ""]
    cc: Int32[Array, ""]
    rect_top: Int32[Array, ""]
    rect_bottom: Int32[Array, ""]
    rect_left: Int32[Array, ""]
    rect_right: Int32[Array, ""]

    @classmethod
    def select(cls, index: Int[Array, ""], choices: list[tuple]) -> CoordinateMap:
        """Pick one of several maps, each given as a 10-tuple of scalars, by ``index``.

        One elementwise ``select_n`` per field (a table built with ``stack`` and indexed
        compiles to a kernel per concatenation).
        """
        index = jnp.clip(jnp.asarray(index, jnp.int32), 0, len(choices) - 1)
        fields = zip(*choices, strict=True)
        return cls(*(lax.select_n(index, *(jnp.asarray(v, jnp.int32) for v in f)) for f in fields))

    def mapped_spans(self, height: int, width: int) -> tuple[Bool[Array, " H"], Bool[Array, " W"]]:
        """Mapped rows and columns: the mapped cells are ``rows[:, None] & cols[None, :]``.

        The destination rectangle, cut (for translations) to the cells whose source lies on
        the canvas; flips and rotations stay inside their box.
        """
        translation = (self.rr == 1) & (self.cc == 1)
        rows = _span(
            height,
            jnp.maximum(self.rect_top, jnp.where(translation, -self.row0, 0)),
            jnp.minimum(self.rect_bottom, jnp.where(translation, height - self.row0, height)),
        )
        cols = _span(
            width,
            jnp.maximum(self.rect_left, jnp.where(translation, -self.col0, 0)),
            jnp.minimum(self.rect_right, jnp.where(translation, width - self.col0, width)),
        )
        return rows, cols

    def variant(self) -> Int32[Array, ""]:
        """Which fixed flip/rotation :meth:`gather` applies after its shift (0: none)."""
        return jnp.where(
            self.cc < 0,
            1,
            jnp.where(self.rr < 0, 2, jnp.where(self.rc < 0, 3, jnp.where(self.cr < 0, 4, 0))),
        ).astype(jnp.int32)

    def shift_flat(self, source: Int8[Array, " C"], height: int, width: int) -> Int8[Array, " S"]:
        """The shift step of :meth:`gather` on a flattened ``height x width`` source: the
        window of the square-padded canvas (side ``max(height, width)``), flattened."""
        side = max(height, width)
        last = side - 1
        row_shift = jnp.where((self.rr < 0) | (self.rc < 0), self.row0 - last, self.row0)
        col_shift = jnp.where((self.cc < 0) | (self.cr < 0), self.col0 - last, self.col0)
        flat = source
        if side != height or side != width:
            square = jnp.pad(source.reshape(height, width), ((0, side - height), (0, side - width)))
            flat = square.reshape(-1)
        offset = (row_shift * side + col_shift) % (side * side)
        return lax.dynamic_slice(jnp.concatenate([flat, flat]), (offset,), (side * side,))

    def gather(self, source: Int8[Array, "H W"]) -> tuple[Int8[Array, "H W"], Int8[Array, "H W"]]:
        """``(mapped_values, shifted)``: each destination's source value (meaningful only where
        :meth:`mapped_spans` says), and the same before the flip/rotation step, which equals it
        for translations (MOVE, COPY, CUT, PASTE) and is cheaper to read.
        """
        height, width = source.shape
        side = max(height, width)
        # Shift first (one window of the flattened, square-padded canvas), then apply the flip
        # or rotation as one of five fixed variants of the shifted canvas U:
        # identity, U[r, L-1-c] (cc<0), U[L-1-r, c] (rr<0), U[L-1-c, r] (rc<0), U[c, L-1-r] (cr<0).
        last = side - 1
        row_shift = jnp.where((self.rr < 0) | (self.rc < 0), self.row0 - last, self.row0)
        col_shift = jnp.where((self.cc < 0) | (self.cr < 0), self.col0 - last, self.col0)
        flat = jnp.pad(source, ((0, side - height), (0, side - width))).reshape(-1)
        offset = (row_shift * side + col_shift) % (side * side)
        window = lax.dynamic_slice(jnp.concatenate([flat, flat]), (offset,), (side * side,))
        shifted = window.reshape(side, side)
        variant = jnp.where(
            self.cc < 0,
            shifted[:, ::-1],
            jnp.where(
                self.rr < 0,
                shifted[::-1, :],
                jnp.where(
                    self.rc < 0,
                    shifted[::-1, :].T,
                    jnp.where(self.cr < 0, shifted[:, ::-1].T, shifted),
                ),
            ),
        )
        return variant[:height, :width], shifted[:height, :width]


def orient_window(shifted: Int8[Array, "L L"], variant: Int32[Array, ""]) -> Int8[Array, "L L"]:
    """The flip/rotation step of :meth:`CoordinateMap.gather`: one of five fixed variants of
    the shifted square window (``variant`` from :meth:`CoordinateMap.variant`; 0 leaves it).

    Under ``vmap`` it is computed only for the environments that flip or rotate (see
    :func:`jaxarc.grid.lanes.where_flagged`; ROTATE_CW/CCW and FLIP_LR/TB are 4 of the 35
    operations), all four variants in one chunk loop: fewer XLA fusions to compile than a
    loop per variant, for two flips and a transpose per such environment
    (docs/design-notes.md).
    """
    return where_flagged(variant > 0, _oriented, shifted, shifted, variant)


def _oriented(window: Int8[Array, "L L"], variant: Int32[Array, ""]) -> Int8[Array, "L L"]:
    """Variant 1..4 of ``window``: a flip (of columns for 1 and 4, of rows for 2 and 3),
    transposed for 3 and 4 (one transpose, the strided read, per environment)."""
    flipped = jnp.where((variant == 1) | (variant == 4), window[:, ::-1], window[::-1, :])
    return jnp.where(variant >= 3, flipped.T, flipped)


def _span(length: int, start: Int32[Array, ""], stop: Int32[Array, ""]) -> Bool[Array, " N"]:
    """Which of ``0 .. length - 1`` lie in ``[start, stop)``."""
    index = jnp.arange(length, dtype=jnp.int32)
    return (index >= start) & (index < stop)
