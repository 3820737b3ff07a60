"""The grid kernel: the 35 operations on padded int8 grids, with no environment logic.

A leaf layer: it imports nothing else from jaxarc. ``operation_ids`` names the
operations; ``operations`` / ``point_operations`` / ``box_operations`` apply them (generic,
point-specialised, and bbox/mask on the flat canvas); ``flood_fill``, ``flood_rows``,
``byte_links``, ``bit_rows``, ``geometry``, ``lanes`` and ``fusion_barrier`` are their
building blocks.
"""

from jaxarc.grid import operation_ids
from jaxarc.grid.box_operations import apply_box_operation, apply_mask_operation
from jaxarc.grid.operation_ids import NUM_OPERATIONS, OPERATION_NAMES, operation_id
from jaxarc.grid.operations import GridState, apply_operation
from jaxarc.grid.point_operations import apply_point_operation

__all__ = [
    "NUM_OPERATIONS",
    "OPERATION_NAMES",
    "GridState",
    "apply_box_operation",
    "apply_mask_operation",
    "apply_operation",
    "apply_point_operation",
    "operation_id",
    "operation_ids",
]
