"""Text labels drawn into RGB images (Pillow's built-in font)."""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageDraw, ImageFont

TEXT_RGB = (0xEE, 0xEE, 0xEE)


@functools.lru_cache(maxsize=8)
def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow built without FreeType: fixed bitmap font
        return ImageFont.load_default()


def text_size(text: str, size: int = 12) -> tuple[int, int]:
    """``(width, height)`` in pixels of ``text`` drawn at ``size``."""
    left, top, right, bottom = _font(size).getbbox(text or " ")
    return right, bottom


def label_strip(text: str, width: int, size: int = 12, background=(0x10, 0x10, 0x10)) -> np.ndarray:
    """A ``uint8 [h, max(width, text width), 3]`` strip with ``text`` on ``background``."""
    text_w, text_h = text_size(text, size)
    strip = Image.new(
        "RGB", (max(width, text_w + 4), text_h + 6), tuple(int(v) for v in background)
    )
    draw = ImageDraw.Draw(strip)
    draw.fontmode = "1"  # no anti-aliasing: two colours, so GIF palettes stay exact
    draw.text((2, 2), text, fill=TEXT_RGB, font=_font(size))
    return np.asarray(strip)


def stack(
    images: list[np.ndarray], axis: int, gap: int, background=(0x10, 0x10, 0x10)
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Images placed along ``axis`` (0: top to bottom, 1: left to right), aligned to the
    top-left, on ``background``; also the ``(top, left)`` of each image."""
    if not images:
        raise ValueError("stack needs at least one image")
    along = sum(img.shape[axis] for img in images) + gap * (len(images) - 1)
    across = max(img.shape[1 - axis] for img in images)
    size = (along, across) if axis == 0 else (across, along)
    canvas = np.empty((*size, 3), dtype=np.uint8)
    canvas[:] = np.asarray(background, dtype=np.uint8)
    offsets, position = [], 0
    for img in images:
        top, left = (position, 0) if axis == 0 else (0, position)
        canvas[top : top + img.shape[0], left : left + img.shape[1]] = img
        offsets.append((top, left))
        position += img.shape[axis] + gap
    return canvas, offsets
