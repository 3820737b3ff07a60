"""The view kinds of the content language, named for tests and reports.

:data:`VIEW_KINDS` groups the views of :func:`~jaxarc.solve.language.views.task_views` by
how their names start; :data:`VIEW_TASKS` names, for each kind, ARC-AGI-1 training tasks
whose simplest program starts from a view of that kind (``tests/test_language.py`` checks
them); :data:`CROP_PICK_TASKS` does the same for the crops by content picks
(:data:`CONTENT_CROPS`), and :data:`CONTENT_BLOW_UP_TASKS` for the blow-ups of the content's
box. :data:`DIHEDRAL` holds the seven turns and mirrors of a grid.
"""

from __future__ import annotations

import numpy as np

DIHEDRAL = {
    "rotate cw": lambda g: np.rot90(g, -1),
    "rotate ccw": lambda g: np.rot90(g, 1),
    "half turn": lambda g: g[::-1, ::-1],
    "flip left-right": lambda g: g[:, ::-1],
    "flip top-bottom": lambda g: g[::-1],
    "transpose": lambda g: g.T,
    "antitranspose": lambda g: g[::-1, ::-1].T,
}


VIEW_TASKS: dict[str, tuple[str, ...]] = {
    # view kind (how its names start) -> ARC-AGI-1 training tasks whose simplest program
    # starts from a view of that kind (tests/test_language.py checks them)
    "input": ("00d62c1b", "0ca9ddb6", "178fcbfb"),
    "turns and mirrors": ("1b60fb0c", "c9f8e694", "ed36ccf7"),
    "crop": ("1cf80156", "1f85a75f", "23b5c85d"),
    "scale or tile": ("9172f3a0", "a416b8f3", "ac0a08a4", "b91ae062", "c59eb873"),
    "self tile": ("007bbfb7", "c3e719e8", "cce03e0d"),
    # (780d0b14: its panels' colours, ``panel cells``, rank first; a sample solves it too)
    "sample": ("445eab21", "5614dbcf", "780d0b14"),
    "parts": ("0520fde7", "1b2d62fb", "3428a4f5"),
    "fall": ("1e0a9b12", "3906de3d", "5582e5ca"),
    "attract": ("05f2a901", "a48eeaf7", "ae3edfdc"),
    "shift": ("1caeab9d", "5521c0d9", "a1570a43", "a79310a0", "dc433765"),
    "recolour": ("272f95fa", "868de0fa", "d2abd087", "ddf7fa4f"),
    "repair": ("0dfd9992", "29ec7d0e", "484b58aa"),
    "stamp": ("0962bcdd", "3ac3eb23", "6c434453", "8403a5d5", "93b581b8", "95990924", "a9f96cdd"),
    "paste": ("321b1fc6", "88a10436", "e76a88a6"),
    "symmetric": ("4938f0c2", "4c5c2cf0", "e40b9e2f", "11852cab"),
    "count": ("1190e5a7", "1fad071e", "4be741c5", "d0f5fe59", "d631b094", "f8b3ba0a"),
    "blank": ("694f12f3", "776ffc46", "a61f2674"),
}
CROP_PICK_TASKS: dict[str, tuple[str, ...]] = {
    # crops by the picks beyond the selectors and the one-object picks (touching a colour,
    # symmetric, copies of one shape, a frame's inside, colour rank, panels of a cut grid)
    # -> ARC-AGI-1 training tasks whose simplest program starts from one
    "content crops": ("0b148d64", "1c786137", "2dc579da", "48d8fb45", "72ca375d"),
}
# the content's box blown up (``content scale``, ``content tile``, ``content self tile``)
# -> ARC-AGI-1 training tasks whose simplest program starts from one
CONTENT_BLOW_UP_TASKS = ("28bf18c6", "8f2ea7aa", "f25fbde4")
CONTENT_CROPS = ("touching colour", "symmetric", "inside", "frequent colour", "cell ")
VIEW_KINDS: dict[str, tuple[str, ...]] = {  # view kind -> the prefixes of its views' names
    "input": ("input",),
    "turns and mirrors": tuple(DIHEDRAL),
    "crop": ("crop",),
    "scale or tile": ("scale", "tile"),
    "self tile": ("self tile",),
    "sample": ("sample",),
    "parts": ("parts",),
    "fall": ("fall",),
    "attract": ("attract",),
    "shift": ("shift",),
    "recolour": ("recolour",),
    "repair": ("repair",),
    "stamp": ("stamp",),
    "paste": ("paste template", "move template"),
    "symmetric": ("symmetric",),
    "count": ("count",),
    "blank": ("blank",),
}


__all__ = [
    "CONTENT_BLOW_UP_TASKS",
    "CONTENT_CROPS",
    "CROP_PICK_TASKS",
    "DIHEDRAL",
    "VIEW_KINDS",
    "VIEW_TASKS",
]
