"""The contract of a program policy (:class:`~jaxarc.agents.model.program_policy.ProgramPolicy`
or your own with the same methods): it compiles once per vocabulary size and gives finite
distributions over the valid items only.

>>> from jaxarc.testing import check_program_policy
>>> check_program_policy(policy)  # raises ContractError naming what broke
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.agents.model.program_policy import (
    ITEM_STATS,
    TASK_STATS,
    ProgramPolicy,
    ProgramStep,
    ProgramTask,
)
from jaxarc.testing.contracts import ContractError


def random_program_task(key: jax.Array, items: int, kinds: int, valid: int) -> ProgramTask:
    """A task of ``items`` vocabulary rows, the first ``valid`` real, with random kinds,
    statistics and parents (about half the items have one; for checking a policy, not for
    learning)."""
    k_kind, k_stats, k_task, k_parent, k_has = jax.random.split(key, 5)
    parents = jax.random.randint(k_parent, (items,), 1, max(valid, 2), dtype=jnp.int32)
    has_parent = jax.random.bernoulli(k_has, 0.5, (items,))
    return ProgramTask(
        jax.random.randint(k_kind, (items,), 0, kinds, dtype=jnp.int32),
        jax.random.uniform(k_stats, (items, ITEM_STATS), jnp.float32),
        jnp.arange(items) < valid,
        jax.random.uniform(k_task, (TASK_STATS,), jnp.float32),
        jnp.where(has_parent, parents, 0),
    )


def check_program_policy(
    policy: ProgramPolicy, vocabulary_sizes: Sequence[int] = (64, 128), seed: int = 0
) -> None:
    """Check ``policy`` on random tasks of each of ``vocabulary_sizes`` items (two tasks
    per size, of different valid counts): one compile per size, chain logits ``[C, C]``
    finite on the valid items, each step's distribution summing to one over the valid
    items and giving the invalid ones no probability, and the same as the chain logits'
    row of its previous item; a :class:`ContractError` otherwise."""
    traces: list[int] = []

    @eqx.filter_jit
    def probe(policy, task, previous):
        traces.append(task.kinds.shape[0])  # (runs once per compile)
        dist = policy.act(ProgramStep(previous), policy.encode_task(task))
        chain = policy.chain_logits(task)
        row = jax.nn.log_softmax(jnp.where(task.valid, chain[previous], -1e9))
        gap = jnp.max(jnp.where(task.valid, jnp.abs(row - dist.log_probs()), 0.0))
        return chain, jnp.exp(dist.log_probs()), dist.entropy(), gap

    key = jax.random.key(seed)
    for size in vocabulary_sizes:
        for valid in (max(size // 3, 1), size):
            key, sub = jax.random.split(key)
            task = random_program_task(sub, size, policy.config.kinds, valid)
            previous = jnp.int32(valid - 1)  # an item that may be a parent
            logits, probs, entropy, gap = map(np.asarray, probe(policy, task, previous))
            where = f"{type(policy).__name__} on {size} items ({valid} valid)"
            if logits.shape != (size, size):
                raise ContractError(f"{where}: chain logits of shape {logits.shape}")
            if not np.isfinite(logits[:valid, :valid]).all() or not np.isfinite(entropy):
                raise ContractError(f"{where}: logits or entropy not finite")
            if abs(probs[:valid].sum() - 1) > 1e-4 or probs[valid:].max(initial=0) > 1e-6:
                raise ContractError(f"{where}: probabilities not on the valid items alone")
            if gap > 1e-4:
                raise ContractError(f"{where}: a step's distribution is not its chain row")
    if len(traces) != len(vocabulary_sizes):
        raise ContractError(
            f"{type(policy).__name__}: compiled {len(traces)} times for "
            f"{len(vocabulary_sizes)} vocabulary sizes ({traces})"
        )
