"""Rendering: grids to RGB arrays, PNG, SVG, ANSI text, task sheets and episode GIFs.

Everything here runs on the host with NumPy and Pillow (never inside compiled code) and
accepts NumPy or JAX arrays.
"""

from jaxarc.render.ansi import colour_enabled, to_ansi, to_terminal, to_text
from jaxarc.render.episode import EpisodeRecord, episode_frames, replay_history, save_episode_gif
from jaxarc.render.image_io import load_gif_frames, load_png, save_gif, save_png
from jaxarc.render.palette import ARC_PALETTE, GRID_LINE_RGB, PADDING_RGB
from jaxarc.render.raster import (
    SELECTION_RGB,
    crop_grid,
    draw_selection,
    render_batch,
    render_rgb,
    selection_outline,
    tile_images,
)
from jaxarc.render.sheet import render_task_sheet, task_entries
from jaxarc.render.svg import save_svg, task_sheet_svg, to_svg

__all__ = [
    "ARC_PALETTE",
    "GRID_LINE_RGB",
    "PADDING_RGB",
    "SELECTION_RGB",
    "EpisodeRecord",
    "colour_enabled",
    "crop_grid",
    "draw_selection",
    "episode_frames",
    "load_gif_frames",
    "load_png",
    "render_batch",
    "render_rgb",
    "render_task_sheet",
    "replay_history",
    "save_episode_gif",
    "save_gif",
    "save_png",
    "save_svg",
    "selection_outline",
    "task_entries",
    "task_sheet_svg",
    "tile_images",
    "to_ansi",
    "to_svg",
    "to_terminal",
    "to_text",
]
