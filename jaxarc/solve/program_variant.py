"""Experimental alternatives to the program learner's adopted design, for ablations.

``jaxarc solve`` and ``jaxarc pretrain-programs`` always learn with :data:`ADOPTED`; only
``benchmarks/program_rl_ablation.py`` (and tests) pass another :class:`LearnerVariant` to
:func:`jaxarc.solve.program_attempts.solve_with_program_rl`. Each switch turns off one part of
the learner (see :class:`~jaxarc.solve.program_rl.ProgramRLConfig` for the rest) so that
its effect can be measured.
"""

from __future__ import annotations

import dataclasses


class VariantError(ValueError):
    """A variant the learner cannot run (with the switch and the reason)."""


@dataclasses.dataclass(frozen=True)
class LearnerVariant:
    """How the learner is built, beyond its settings.

    ``credit``: ``"step"`` credits each step with what the program earned from it on,
    ``"program"`` every step with the whole reward. ``policy``: ``"chain"`` draws each
    action from the row of the one before (and stops at the no-op), ``"per-step"`` from a
    row per step (no prior applies to it). ``memory``: the best program found so far
    replaces one sample of every group. ``hindsight_stop``: a sampled program counts, for
    the memory and for success, as if it had stopped at its best step. ``explore_from_memory``:
    exploring programs replay a prefix of the memory before their uniform action (else they
    start from the empty program). ``restarts``: the task is learned that many times from
    independent keys, and the test grids of the programs that solve every demonstration
    vote. ``language``: the task's content-language items
    (:mod:`jaxarc.solve.language.vocabulary`: the search's safe paints on the ``input``
    view of same-shape tasks) join the whole-grid actions in the vocabulary."""

    credit: str = "step"
    policy: str = "chain"
    memory: bool = True
    hindsight_stop: bool = True
    explore_from_memory: bool = True
    restarts: int = 1
    language: bool = False

    def __post_init__(self) -> None:
        if self.credit not in ("step", "program"):
            raise VariantError(f"LearnerVariant.credit={self.credit!r}: 'step' or 'program'")
        if self.policy not in ("chain", "per-step"):
            raise VariantError(f"LearnerVariant.policy={self.policy!r}: 'chain' or 'per-step'")
        if self.restarts < 1:
            raise VariantError(f"LearnerVariant.restarts={self.restarts}: at least 1")


ADOPTED = LearnerVariant()  # what jaxarc solve learns with
