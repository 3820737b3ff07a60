"""Grids to RGB pixel arrays: one grid, a selection outline, a batch of thumbnails.

All functions here are host-side NumPy (rendering happens outside compiled code); they accept
NumPy or JAX arrays. A grid is ``int`` ``[H, W]`` with colours ``0..9`` and ``-1`` for cells
outside the active area, which are drawn in the padding colour.
"""

from __future__ import annotations

import numpy as np

from jaxarc.render.palette import ARC_PALETTE, GRID_LINE_RGB, PADDING_RGB

# colour lookup indexed by ``value + 1``: row 0 is padding (-1), rows 1..10 the ARC colours
_LOOKUP = np.concatenate([PADDING_RGB[None], ARC_PALETTE], axis=0)
SELECTION_RGB: np.ndarray = np.array([0xFF, 0xFF, 0xFF], dtype=np.uint8)
BACKGROUND_RGB: np.ndarray = np.array([0x10, 0x10, 0x10], dtype=np.uint8)


def as_grid(grid, name: str = "grid") -> np.ndarray:
    """``grid`` as an ``int16 [H, W]`` NumPy array; ``ValueError`` naming bad cells."""
    array = np.asarray(grid)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D [H, W], got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {array.dtype}")
    array = array.astype(np.int16)
    bad = np.argwhere((array < -1) | (array > 9))
    if len(bad):
        row, col = (int(v) for v in bad[0])
        raise ValueError(
            f"{name} has {len(bad)} cell(s) outside -1..9, first at (row {row}, col {col}): "
            f"{int(array[row, col])}"
        )
    return array


def crop_grid(grid, shape=None) -> np.ndarray:
    """The top-left ``shape`` (rows, cols) of ``grid``; by default the area of cells != -1."""
    array = as_grid(grid)
    if shape is None:
        inside = np.argwhere(array >= 0)
        if not len(inside):
            return array[:0, :0]
        rows, cols = inside.max(axis=0) + 1
    else:
        rows, cols = (int(v) for v in np.asarray(shape).reshape(2))
        if not (0 <= rows <= array.shape[0] and 0 <= cols <= array.shape[1]):
            raise ValueError(f"shape {(rows, cols)} does not fit in a grid of {array.shape}")
    return array[:rows, :cols]


def render_rgb(grid, cell_size: int = 16, *, grid_lines: bool = True, shape=None) -> np.ndarray:
    """Draw a grid as ``uint8 [H * cell_size, W * cell_size, 3]``.

    Cells with value ``-1`` (outside the active area) use the padding colour. With
    ``grid_lines`` (and ``cell_size >= 4``) the first pixel row and column of every cell are
    drawn in the grid-line colour, so the image size stays ``H * cell_size``. ``shape``
    crops to the top-left ``(rows, cols)`` first.
    """
    if not (isinstance(cell_size, int | np.integer) and cell_size >= 1):
        raise ValueError(f"cell_size must be a positive int, got {cell_size!r}")
    array = as_grid(grid) if shape is None else crop_grid(grid, shape)
    image = _LOOKUP[array + 1]  # [H, W, 3]
    image = np.repeat(np.repeat(image, cell_size, axis=0), cell_size, axis=1)
    if grid_lines and cell_size >= 4:
        image[::cell_size, :, :] = GRID_LINE_RGB
        image[:, ::cell_size, :] = GRID_LINE_RGB
    return np.ascontiguousarray(image)


def selection_outline(selection, cell_size: int, thickness: int = 2) -> np.ndarray:
    """Pixels (``bool [H * s, W * s]``) on the inner border of the selected cells' region."""
    mask = np.asarray(selection, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"selection must be 2-D [H, W], got shape {mask.shape}")
    pixels = np.repeat(np.repeat(mask, cell_size, axis=0), cell_size, axis=1)
    thickness = max(1, min(thickness, cell_size // 2 or 1))
    padded = np.pad(pixels, thickness, constant_values=False)
    height, width = pixels.shape
    interior = pixels.copy()
    for step in range(1, thickness + 1):
        for dr, dc in ((step, 0), (-step, 0), (0, step), (0, -step)):
            top, left = thickness + dr, thickness + dc
            interior &= padded[top : top + height, left : left + width]
    return pixels & ~interior


def draw_selection(
    image: np.ndarray, selection, cell_size: int, colour: np.ndarray = SELECTION_RGB
) -> np.ndarray:
    """A copy of a rendered grid with the selected region outlined in ``colour``."""
    mask = np.asarray(selection, dtype=bool)
    rows, cols = image.shape[0] // cell_size, image.shape[1] // cell_size
    outline = selection_outline(mask[:rows, :cols], cell_size)
    out = image.copy()
    out[outline] = colour
    return out


def tile_images(images: list[np.ndarray], columns: int | None = None, gap: int = 4) -> np.ndarray:
    """Tile RGB images (any sizes) on a background into rows of ``columns``, top-left aligned."""
    if not images:
        raise ValueError("tile_images needs at least one image")
    count = len(images)
    columns = columns or int(np.ceil(np.sqrt(count)))
    rows = int(np.ceil(count / columns))
    cell_h = max(img.shape[0] for img in images)
    cell_w = max(img.shape[1] for img in images)
    height = rows * cell_h + (rows + 1) * gap
    width = columns * cell_w + (columns + 1) * gap
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[:] = BACKGROUND_RGB
    for k, img in enumerate(images):
        r, c = divmod(k, columns)
        top, left = gap + r * (cell_h + gap), gap + c * (cell_w + gap)
        canvas[top : top + img.shape[0], left : left + img.shape[1]] = img
    return canvas


def render_batch(
    grids,
    cell_size: int = 4,
    *,
    shapes=None,
    columns: int | None = None,
    gap: int = 4,
    grid_lines: bool = False,
) -> np.ndarray:
    """A batch ``[B, H, W]`` of grids as one RGB image of thumbnails (``columns`` per row).

    ``shapes`` (``[B, 2]``) crops each grid to its active area; without it the whole canvas
    is drawn, padding included.
    """
    batch = np.asarray(grids)
    if batch.ndim != 3:
        raise ValueError(f"grids must be 3-D [B, H, W], got shape {batch.shape}")
    shape_rows = [None] * len(batch) if shapes is None else np.asarray(shapes).reshape(-1, 2)
    if len(shape_rows) != len(batch):
        raise ValueError(f"{len(shape_rows)} shapes for {len(batch)} grids")
    images = [
        render_rgb(grid, cell_size, grid_lines=grid_lines, shape=shape)
        for grid, shape in zip(batch, shape_rows, strict=True)
    ]
    images = [img if img.size else np.zeros((cell_size, cell_size, 3), np.uint8) for img in images]
    return tile_images(images, columns=columns, gap=gap)
