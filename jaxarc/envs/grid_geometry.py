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

    def contains(self, rows: Int32[Array, "H W"], cols: Int32[Array, "H W"]) -> Bool[Array, "H W"]:
        """Which cells lie inside the box."""
        return (
            (rows >= self.top) & (rows <= self.bottom) & (cols >= self.left) & (cols <= self.right)
        )


class CoordinateMap(eqx.Module):
    """Destination ``(r, c)`` reads source ``(row0 + rr*r + rc*c, col0 + cr*r + cc*c)``.

    Only destinations inside the half-open rectangle ``[rect_top, rect_bottom) x
    [rect_left, rect_right)`` and with an in-canvas source are mapped.
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
        """Pick one of several maps, each given as a 10-tuple of scalars, by ``index``."""
        table = jnp.stack([jnp.stack([jnp.asarray(v, jnp.int32) for v in row]) for row in choices])
        row = table[index]
        return cls(*(row[k] for k in range(10)))

    def gather(self, source: Int8[Array, "H W"]) -> tuple[Int8[Array, "H W"], Bool[Array, "H W"]]:
        """``(values, mapped)``: each destination's source value, and where the map applies."""
        height, width = source.shape
        rows = lax.broadcasted_iota(jnp.int32, (height, width), 0)
        cols = lax.broadcasted_iota(jnp.int32, (height, width), 1)
        src_rows = self.row0 + self.rr * rows + self.rc * cols
        src_cols = self.col0 + self.cr * rows + self.cc * cols
        mapped = (
            (rows >= self.rect_top)
            & (rows < self.rect_bottom)
            & (cols >= self.rect_left)
            & (cols < self.rect_right)
            & (src_rows >= 0)
            & (src_rows < height)
            & (src_cols >= 0)
            & (src_cols < width)
        )
        flat_index = jnp.clip(src_rows, 0, height - 1) * width + jnp.clip(src_cols, 0, width - 1)
        values = jnp.take(source.reshape(-1), flat_index, mode="clip")
        return values, mapped
