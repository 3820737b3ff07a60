"""Writing and reading images: PNG files and animated GIFs (Pillow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def _as_image_array(image, name: str = "image") -> np.ndarray:
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[-1] != 3 or array.dtype != np.uint8:
        raise ValueError(f"{name} must be uint8 [H, W, 3], got {array.dtype} {array.shape}")
    return array


def save_png(image, path, *, cell_size: int = 16) -> Path:
    """Save an RGB image (``uint8 [H, W, 3]``) or a grid (``int [H, W]``, drawn first) as PNG."""
    from jaxarc.render.raster import render_rgb

    array = np.asarray(image)
    if array.ndim == 2:
        array = render_rgb(array, cell_size)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(_as_image_array(array)).save(path, format="PNG")
    return path


def load_png(path) -> np.ndarray:
    """An image file as ``uint8 [H, W, 3]``."""
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def save_gif(frames, path, *, frame_ms: int = 500, last_frame_ms: int = 1500) -> Path:
    """Save RGB frames (a list of ``uint8 [H, W, 3]``, padded to a common size) as a looping GIF.

    Colours are kept exactly (an adaptive palette of the frames' own colours), so pixel
    values read back from the GIF match the frames.
    """
    arrays = [_as_image_array(f, f"frames[{k}]") for k, f in enumerate(frames)]
    if not arrays:
        raise ValueError("save_gif needs at least one frame")
    height = max(a.shape[0] for a in arrays)
    width = max(a.shape[1] for a in arrays)
    padded = []
    for a in arrays:
        canvas = np.zeros((height, width, 3), dtype=np.uint8)
        canvas[: a.shape[0], : a.shape[1]] = a
        padded.append(canvas)
    # one shared palette built from every frame, so colours never shift between frames
    stacked = Image.fromarray(np.concatenate(padded, axis=0))
    palette_image = stacked.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=0)
    images = [
        Image.fromarray(p).quantize(palette=palette_image, dither=Image.Dither.NONE) for p in padded
    ]
    durations = [frame_ms] * (len(images) - 1) + [last_frame_ms]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(
        path,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=False,
        disposal=1,
    )
    return path


def load_gif_frames(path) -> list[np.ndarray]:
    """Every frame of a GIF as ``uint8 [H, W, 3]``."""
    frames = []
    with Image.open(path) as img:
        for k in range(getattr(img, "n_frames", 1)):
            img.seek(k)
            frames.append(np.asarray(img.convert("RGB")))
    return frames
