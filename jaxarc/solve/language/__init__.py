"""A language of content rules for ARC tasks, played through the environment's
``MaskAction``.

A program is a **view** (the output's size first: the input, a crop, a turn, parts laid
over each other, objects slid until they touch, objects recoloured by a learned key, a size
from a count, ...; :mod:`~jaxarc.solve.language.views`, :mod:`~jaxarc.solve.language.motion`,
:mod:`~jaxarc.solve.language.recolour`, :mod:`~jaxarc.solve.language.counts`) and
**paints** (a mask rule that chooses cells on each grid, :mod:`~jaxarc.solve.language.masks`,
and the colour it writes, :mod:`~jaxarc.solve.language.colours`;
:mod:`~jaxarc.solve.language.paint`). The
paints of a task are chosen as a cover that fits every demonstration at once; the program
then becomes one ``MaskAction`` sequence per grid and the environment replays it
(:mod:`~jaxarc.solve.language.program`). :func:`language_solutions` gives a task's
programs that solve every demonstration, simplest first; ``jaxarc solve --method search``
tries them after its breadth-first search and tilings. The program learner can draw from
the same language: :mod:`~jaxarc.solve.language.vocabulary` offers a task's safe paints one
by one as items of its vocabulary.
"""

from jaxarc.solve.language.colours import COLOUR_RULES, grid_colours
from jaxarc.solve.language.finder import LanguageSolution, language_solutions
from jaxarc.solve.language.masks import FAMILY_NAMES, MASK_FAMILIES, grid_masks
from jaxarc.solve.language.objects import Objects, background, grid_objects
from jaxarc.solve.language.paint import Paint, find_cover
from jaxarc.solve.language.program import LanguageProgram, play_on_task
from jaxarc.solve.language.views import View, task_views

__all__ = [
    "COLOUR_RULES",
    "FAMILY_NAMES",
    "MASK_FAMILIES",
    "LanguageProgram",
    "LanguageSolution",
    "Objects",
    "Paint",
    "View",
    "background",
    "find_cover",
    "grid_colours",
    "grid_masks",
    "grid_objects",
    "language_solutions",
    "play_on_task",
    "task_views",
]
