"""Which :class:`~jaxarc.solve.method.SolveMethod` a run uses, as its settings name it, and
the method built from them.

:class:`MethodChoice` holds what ``jaxarc solve``'s flags say about the method (its name,
prior, checkpoint, depth, budget, seed); :func:`build_method` builds that method, reading
and checking everything it needs (a prior, a checkpoint) so that a bad setting fails with a
:class:`~jaxarc.solve.method.MethodError` before the first task. Nothing here imports JAX
until a method is built.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from jaxarc.solve.method import Budget, SolveMethod

DEFAULT_DEPTH = 2  # search and random: actions per sequence
NO_PRIOR = "none"  # program-rl: start every task uniform
SHIPPED_NETWORK = "network"  # program-rl: start from the program network shipped with jaxarc


@dataclasses.dataclass(frozen=True)
class MethodChoice:
    """The method a run uses and its settings.

    ``name``: as ``--method`` gives it; ``prior``: program-rl's prior directory, ``None``
    for the one shipped with jaxarc, :data:`SHIPPED_NETWORK` for the program network
    shipped with jaxarc, or :data:`NO_PRIOR`; ``checkpoint``: policy and
    test-time-rl's trained network run; ``depth``: search and random's actions per
    sequence (``None``: :data:`DEFAULT_DEPTH`); ``budget``: per task (``None``: the
    method's default); ``tasks_at_once``: test-time-rl's tasks learned together;
    ``batch_size``: policy's episodes; ``progress_log``: where test-time-rl keeps its
    finished tasks until the submission is written."""

    name: str
    prior: str | None = None
    checkpoint: Path | None = None
    depth: int | None = None
    budget: Budget | None = None
    seed: int = 0
    tasks_at_once: int | None = None
    batch_size: int = 32
    progress_log: Path | None = None

    @property
    def budget_steps(self) -> int | None:
        return None if self.budget is None else self.budget.steps

    def describe_budget(self) -> str:
        return "none" if self.budget is None else self.budget.describe()


def build_method(choice: MethodChoice) -> SolveMethod:
    """The method ``choice`` names, built and so checked (a
    :class:`~jaxarc.solve.method.MethodError` when it cannot be)."""
    if choice.name == "program-rl":
        from jaxarc.solve.program_rl_method import (
            DEFAULT_PRIOR_DIR,
            SHIPPED_NETWORK_DIR,
            ProgramRLMethod,
        )

        named = {None: DEFAULT_PRIOR_DIR, NO_PRIOR: None, SHIPPED_NETWORK: SHIPPED_NETWORK_DIR}
        prior = named.get(choice.prior, choice.prior)
        return ProgramRLMethod.with_budget(
            None if prior is None else Path(prior), choice.budget_steps, seed=choice.seed
        )
    if choice.name in ("search", "random"):
        from jaxarc.solve.search_method import (
            RandomConfig,
            RandomMethod,
            SearchConfig,
            SearchMethod,
        )

        depth = DEFAULT_DEPTH if choice.depth is None else choice.depth
        if choice.name == "search":
            return SearchMethod(SearchConfig(depth, choice.budget or Budget()))
        return RandomMethod(RandomConfig(depth, choice.seed))
    if choice.name in ("policy", "test-time-rl"):
        return _policy_method(choice)
    raise ValueError(f"no solve method {choice.name!r}")


def _policy_method(choice: MethodChoice) -> SolveMethod:
    from jaxarc.solve.policy_finetune import TestTimeConfig
    from jaxarc.solve.policy_methods import (
        FrozenPolicyConfig,
        FrozenPolicyMethod,
        PolicyFinetuneConfig,
        PolicyFinetuneMethod,
    )

    if choice.checkpoint is None:
        raise ValueError(f"--method {choice.name} needs a checkpoint")
    steps = choice.budget_steps
    if choice.name == "policy":
        config = FrozenPolicyConfig(choice.checkpoint, steps, choice.batch_size, choice.seed)
        return FrozenPolicyMethod(config)
    finetune = TestTimeConfig(tasks_at_once=choice.tasks_at_once or 1)
    return PolicyFinetuneMethod(
        PolicyFinetuneConfig(choice.checkpoint, steps, finetune, choice.progress_log, choice.seed)
    )
