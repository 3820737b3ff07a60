"""ARC task data: parsing, the padded task bank, bundled and user sources."""

from jaxarc.data.bank import DEFAULT_CANVAS, PAD_VALUE, Task, TaskBank, TaskIds
from jaxarc.data.source import AbstractTaskSource

__all__ = [
    "DEFAULT_CANVAS",
    "PAD_VALUE",
    "AbstractTaskSource",
    "Task",
    "TaskBank",
    "TaskIds",
]
