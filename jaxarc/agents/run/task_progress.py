"""What ``jaxarc eval``, ``jaxarc solve`` and ``jaxarc pretrain-programs`` show over their
tasks: the progress bar (on stderr) and rates as they print them."""

from __future__ import annotations

from typing import Any


class TaskProgress:
    """A ``progress(done, total)`` callback that draws a bar over tasks from its first call.

    The bar starts with ``first_label`` (e.g. a notice that the first batch compiles the
    program) and takes ``label`` once some task is done. Call :meth:`close` when the work
    ends, or fails."""

    def __init__(self, first_label: str, label: str | None = None, *, enabled: bool = True):
        self.first_label, self.label = first_label, label or first_label
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        from tqdm.auto import tqdm

        if self.bar is None:
            self.bar = tqdm(
                total=total,
                unit="task",
                dynamic_ncols=True,
                mininterval=0,
                disable=not self.enabled,
                desc=self.first_label,
            )
        if done > 0:
            self.bar.set_description_str(self.label, refresh=False)
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.bar.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def percent(rate: float) -> str:
    """A rate in ``[0, 1]`` as the CLI and the docs print it: ``100%``, ``99.8%``, ``0.25%``."""
    text = f"{100 * rate:.2f}" if 0 < rate < 0.01 else f"{100 * rate:.1f}"
    return text.removesuffix(".0") + "%"
