"""``jaxarc solve --method program-rl``: each task's program policy learned by
GRPO from its demonstrations (:mod:`jaxarc.solve.program_rl`), starting from a prior over
programs (:mod:`jaxarc.solve.program_prior`) or from a program network trained across tasks
(:mod:`jaxarc.solve.program_network`; its directory is given in the prior's place, and
the tasks are then learned with the content language's items in their vocabularies, for
:data:`NETWORK_UPDATES` updates unless a budget says otherwise).

The prior shipped with the package (:data:`DEFAULT_PRIOR_DIR`, pretrained on ARC-AGI-1
training tasks 100-399) is the default start; another prior directory or none (every action
equally likely) can be chosen. A prior records the learner settings it was made with, and
the tasks are learned with those settings (:func:`~jaxarc.solve.program_prior.load_prior`
refuses a prior that does not record them all); a budget changes only the number of updates.
A prior also records the content hashes of the tasks it was pretrained on, and
:meth:`ProgramRLMethod.tasks_seen_by_prior` names the tasks of a source among them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jaxtyping import Float32

from jaxarc.solve.attempts import TaskAttempts
from jaxarc.solve.method import MethodError, SolveMethod, whole_updates
from jaxarc.solve.network_store import NetworkError, is_network_dir, load_network, seen_by_network
from jaxarc.solve.prior_store import load_prior, seen_by_prior
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_attempts import program_rl_attempts
from jaxarc.solve.program_prior import PriorError
from jaxarc.solve.program_rl import ProgramRLConfig
from jaxarc.solve.program_variant import ADOPTED, LearnerVariant

DEFAULT_PRIOR_DIR = Path(__file__).parent / "priors" / "arc_agi_1_training"
# the program network shipped with the package (trained on the same tasks; --prior network)
SHIPPED_NETWORK_DIR = Path(__file__).parent / "priors" / "program_network"
# updates per task from a network's start (chosen on the tuning split: the content
# language's items are found within a few updates; 25 solve what 100 do, in a third of the
# time)
NETWORK_UPDATES = 25


@dataclasses.dataclass(frozen=True)
class ProgramRLSolveConfig:
    """``prior``: the prior's directory (or a program network's), or ``None`` to start
    every task uniform (the learner's default settings); ``updates``: GRPO updates per
    task, ``None`` for the prior's (or the default) number; ``seed``: task ``k`` learns
    with ``fold_in(key(seed), k)``."""

    prior: Path | None = DEFAULT_PRIOR_DIR
    updates: int | None = None
    seed: int = 0


class ProgramRLMethod(SolveMethod):
    """``program-rl``: see the module docstring."""

    name = "program-rl"
    step_unit = "program_steps"  # per demonstration pair

    def __init__(self, config: ProgramRLSolveConfig) -> None:
        self.config = config
        self.prior: Float32[np.ndarray, "K K"] | None = None
        self.variant: LearnerVariant = ADOPTED
        self.start_logits = None
        learner = ProgramRLConfig()
        if config.prior is not None and is_network_dir(config.prior):
            from jaxarc.solve.program_network import network_start

            try:
                network = load_network(config.prior)
            except NetworkError as err:
                raise MethodError(str(err)) from None
            self.variant = LearnerVariant(language=True)
            learner = dataclasses.replace(learner, updates=NETWORK_UPDATES)
            self.start_logits = network_start(network, learner)
        elif config.prior is not None:
            try:
                self.prior, prior_config = load_prior(config.prior)
            except PriorError as err:
                raise MethodError(str(err)) from None
            learner = prior_config.program
        if config.updates is not None:
            learner = dataclasses.replace(learner, updates=config.updates)
        self.learner = learner

    @classmethod
    def with_budget(cls, prior: Path | None, steps: int | None, seed: int = 0) -> ProgramRLMethod:
        """The method learning from ``prior`` with as many updates as ``steps`` program
        steps per demonstration pay for (``None``: the prior's number of updates)."""
        method = cls(ProgramRLSolveConfig(prior=prior, seed=seed))
        if steps is None:
            return method
        per_update = method.learner.program_steps_per_update
        what = (
            f"one program-rl update takes {per_update} program steps per demonstration "
            f"({method.learner.group_size} programs x {method.learner.program_length} actions)"
        )
        updates = whole_updates(steps, per_update, what)
        return cls(ProgramRLSolveConfig(prior=prior, updates=updates, seed=seed))

    def tasks_seen_by_prior(self, problems: list[Problem]) -> list[str] | None:
        """The ids of ``problems`` the prior was pretrained on (by content, not by id), in
        order: ``[]`` with no prior; ``None`` when the prior records no task hashes."""
        if self.config.prior is None:
            return []
        try:
            if self.start_logits is not None:
                return seen_by_network(self.config.prior, problems)
            return seen_by_prior(self.config.prior, problems)
        except (PriorError, NetworkError) as err:
            raise MethodError(str(err)) from None

    def solve(self, problem: Problem, index: int) -> tuple[TaskAttempts, dict[str, Any]]:
        key = jax.random.fold_in(jax.random.key(self.config.seed), index)
        return program_rl_attempts(
            problem, self.learner, key, self.prior, self.variant, self.start_logits
        )

    def settings(self) -> dict[str, Any]:
        prior = "none (uniform)" if self.config.prior is None else str(self.config.prior)
        return {
            "prior": prior,
            "start": "uniform"
            if self.config.prior is None
            else ("network" if self.start_logits is not None else "prior over kinds"),
            "language_items": self.variant.language,
            "program_rl": dataclasses.asdict(self.learner),
            "program_steps_per_task": self.steps_per_task(),
        }

    def steps_per_task(self) -> int:
        return self.learner.program_steps_per_task

    def describe(self) -> str:
        return "program-rl (each canvas and vocabulary size compiles once)"
