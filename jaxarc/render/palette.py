"""The standard ARC colour palette (index 0-9) and the padding colour."""

from __future__ import annotations

import numpy as np

# RGB of colours 0..9 as drawn by the official ARC viewer.
ARC_PALETTE: np.ndarray = np.array(
    [
        [0x00, 0x00, 0x00],  # 0 black
        [0x00, 0x74, 0xD9],  # 1 blue
        [0xFF, 0x41, 0x36],  # 2 red
        [0x2E, 0xCC, 0x40],  # 3 green
        [0xFF, 0xDC, 0x00],  # 4 yellow
        [0xAA, 0xAA, 0xAA],  # 5 grey
        [0xF0, 0x12, 0xBE],  # 6 magenta
        [0xFF, 0x85, 0x1B],  # 7 orange
        [0x7F, 0xDB, 0xFF],  # 8 sky
        [0x87, 0x0C, 0x25],  # 9 maroon
    ],
    dtype=np.uint8,
)
PADDING_RGB: np.ndarray = np.array([0x20, 0x20, 0x20], dtype=np.uint8)  # cells outside the grid
GRID_LINE_RGB: np.ndarray = np.array([0x55, 0x55, 0x55], dtype=np.uint8)
