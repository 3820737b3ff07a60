"""Host-side statistics of a task bank, for ``jaxarc data info`` and quick checks."""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxarc.data.bank import TaskBank
from jaxarc.data.parsing import NUM_COLOURS
from jaxarc.data.stacking import bank_to_host


@dataclasses.dataclass(frozen=True)
class BankSummary:
    """Counts over every real (unpadded) grid of a bank."""

    name: str
    num_tasks: int
    canvas_shape: tuple[int, int]
    demo_pairs: int
    test_pairs: int
    scored_test_pairs: int
    max_demos: int  # most demonstration pairs in one task
    max_tests: int
    largest_grid: tuple[int, int]  # (rows, cols) of the grid with the most cells
    largest_grid_task: str
    colour_histogram: tuple[int, ...]  # cells of each colour 0-9, over all grids

    def format(self) -> str:
        total = max(sum(self.colour_histogram), 1)
        lines = [
            f"source:        {self.name}",
            f"tasks:         {self.num_tasks}",
            f"canvas:        {self.canvas_shape[0]}x{self.canvas_shape[1]}",
            f"demo pairs:    {self.demo_pairs} (at most {self.max_demos} per task)",
            f"test pairs:    {self.test_pairs} (at most {self.max_tests} per task, "
            f"{self.scored_test_pairs} with outputs)",
            f"largest grid:  {self.largest_grid[0]}x{self.largest_grid[1]} "
            f"(task {self.largest_grid_task})",
            "colours:",
        ]
        for colour, count in enumerate(self.colour_histogram):
            lines.append(f"  {colour}: {count:>10d}  {100.0 * count / total:5.1f}%")
        return "\n".join(lines)


def summarize_bank(bank: TaskBank) -> BankSummary:
    """Pair counts, the largest grid and the colour histogram of ``bank`` (NumPy, on host)."""
    host = bank_to_host(bank)
    histogram = np.zeros(NUM_COLOURS, np.int64)
    for field in ("demo_inputs", "demo_outputs", "test_inputs", "test_outputs"):
        cells = host[field].reshape(-1)
        histogram += np.bincount(cells[cells >= 0], minlength=NUM_COLOURS)[:NUM_COLOURS]
    shapes = np.concatenate(
        [
            host[f].reshape(bank.num_tasks, -1, 2)
            for f in (
                "demo_input_shapes",
                "demo_output_shapes",
                "test_input_shapes",
                "test_output_shapes",
            )
        ],
        axis=1,
    )
    areas = shapes[..., 0].astype(np.int64) * shapes[..., 1]
    task, slot = np.unravel_index(int(np.argmax(areas)), areas.shape)
    return BankSummary(
        name=bank.name,
        num_tasks=bank.num_tasks,
        canvas_shape=bank.canvas_shape,
        demo_pairs=int(host["num_demos"].sum()),
        test_pairs=int(host["num_tests"].sum()),
        scored_test_pairs=int(host["test_scored"].sum()),
        max_demos=int(host["num_demos"].max()),
        max_tests=int(host["num_tests"].max()),
        largest_grid=(int(shapes[task, slot, 0]), int(shapes[task, slot, 1])),
        largest_grid_task=bank.task_ids[int(task)],
        colour_histogram=tuple(int(c) for c in histogram),
    )
