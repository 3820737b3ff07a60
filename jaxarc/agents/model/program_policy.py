"""A task-conditioned program policy: a pointer over a task's vocabulary of actions.

A task offers a vocabulary of ``C`` items (row 0 the no-op that ends a program; then
whole-grid actions and the content language's paints, see :mod:`jaxarc.solve.program_rl`).
The policy reads each item's features, the same for every task: its **kind** (operation and
box class, or paint kind and mask family) and what it does alone on the demonstrations (the
score it reaches, the gain over the input, whether it solves every pair), with a few
features of the task. It scores every item given the item played before it, so one
network gives any task's ``[C, C]`` chain logits: ``logits[previous, next]``. An item may
have a **parent** (a paint drawn on a view has that view's item): how the next item stands
to the previous one (:data:`RELATIONS`: no parent, the previous item is its parent, they
share a parent, its parent is elsewhere) adds a learned bias, so the policy can learn to
lay a view and then paint on it in any task.

It is an :class:`~jaxarc.agents.model.policy.AbstractPolicy`, so the GRPO trainer's loss
and train step (:mod:`jaxarc.agents.grpo.train_step`) train it unchanged: the task table
of a batch is a :class:`ProgramTask` per task, each step's observation a
:class:`ProgramStep` (the previous item), each action an item index.

Static and traced: the sizes (``C``, the features, the widths) are static; a task's
features, its valid items and the previous item are traced, so one compiled program serves
every task padded to ``C`` items.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray

from jaxarc.agents.model.policy import AbstractPolicy

ITEM_STATS = 4  # per item: score alone, gain alone, solves alone, changes anything
TASK_STATS = 4  # per task: the input's score, items, demonstrations, canvas (scaled)
RELATIONS = ("no parent", "after its parent", "after a sibling", "parent elsewhere")


class ProgramTask(eqx.Module):
    """One task as the policy reads it: per item its kind ``[C]`` and statistics
    ``[C, ITEM_STATS]``, which items are real ``[C]``, the task's statistics, and per item
    its parent's index ``[C]`` (``0``: none; item 0, the no-op, is no parent)."""

    kinds: Int32[Array, " C"]
    item_stats: Float32[Array, "C S"]
    valid: Bool[Array, " C"]
    task_stats: Float32[Array, " F"]
    parents: Int32[Array, " C"]


class ProgramStep(eqx.Module):
    """One step's observation: the item played before it (0: the start, the no-op)."""

    previous: Int32[Array, ""]


class ProgramEncoding(eqx.Module):
    """A task encoded once: each item as a previous item (``query``), as a next item
    (``key``) and its own score (``bias``), which items are real, their parents and the
    bias of each of :data:`RELATIONS`."""

    query: Float32[Array, "C E"]
    key: Float32[Array, "C E"]
    bias: Float32[Array, " C"]
    valid: Bool[Array, " C"]
    parents: Int32[Array, " C"]
    relation_bias: Float32[Array, " R"]

    def relation_logits(self, previous: Int32[Array, " P"]) -> Float32[Array, "P C"]:
        """The bias each next item gets after each of ``previous`` (see :data:`RELATIONS`)."""
        parent = self.parents[None]
        has_parent = parent > 0
        relation = jnp.where(
            ~has_parent,
            0,
            jnp.where(
                parent == previous[:, None],
                1,
                jnp.where(parent == self.parents[previous][:, None], 2, 3),
            ),
        )
        return self.relation_bias[relation]


class ItemDistribution(eqx.Module):
    """A categorical over a task's items (``logits [C]``; invalid items at ``-inf``
    probability, kept finite)."""

    logits: Float32[Array, " C"]
    valid: Bool[Array, " C"]

    def log_probs(self) -> Float32[Array, " C"]:
        masked = jnp.where(self.valid, self.logits, -1e9)
        return jax.nn.log_softmax(masked)

    def sample(self, key: PRNGKeyArray) -> Int32[Array, ""]:
        return jax.random.categorical(key, self.log_probs()).astype(jnp.int32)

    def log_prob(self, action: Int32[Array, ""]) -> Float32[Array, ""]:
        return self.log_probs()[action]

    def mode(self) -> Int32[Array, ""]:
        return jnp.argmax(self.log_probs()).astype(jnp.int32)

    def entropy(self) -> Float32[Array, ""]:
        log_p = self.log_probs()
        return -jnp.sum(jnp.where(self.valid, jnp.exp(log_p) * log_p, 0.0))

    def row(self, index: Int32[Array, ""]) -> ItemDistribution:
        return jax.tree.map(lambda x: x[index], self)


@dataclasses.dataclass(frozen=True)
class ProgramPolicyConfig:
    """``kinds``: how many item kinds there are (an embedding row each); ``embed``: the
    kind embedding's width; ``hidden``: the item network's width; ``width``: the query and
    key width."""

    kinds: int
    embed: int = 32
    hidden: int = 64
    width: int = 32

    def __post_init__(self) -> None:
        for name in ("kinds", "embed", "hidden", "width"):
            if getattr(self, name) < 1:
                raise ValueError(f"ProgramPolicyConfig.{name}={getattr(self, name)}: at least 1")


class ProgramPolicy(AbstractPolicy):
    """Scores every item of a task given the previous one (see the module docstring):
    ``logits[previous, next] = query(previous) . key(next) / sqrt(E) + bias(next)`` plus the
    bias of how ``next`` stands to ``previous`` (:data:`RELATIONS`), each item's vectors
    from its kind embedding, its statistics and the task's."""

    kind_embedding: Float32[Array, "K D"]
    item_net: eqx.nn.MLP
    query_head: eqx.nn.Linear
    key_head: eqx.nn.Linear
    bias_head: eqx.nn.Linear
    relation_bias: Float32[Array, " R"]
    config: ProgramPolicyConfig = eqx.field(static=True)

    def __init__(self, key: PRNGKeyArray, config: ProgramPolicyConfig):
        k_embed, k_net, k_query, k_key, k_bias = jax.random.split(key, 5)
        self.config = config
        self.kind_embedding = 0.1 * jax.random.normal(k_embed, (config.kinds, config.embed))
        self.item_net = eqx.nn.MLP(
            config.embed + ITEM_STATS + TASK_STATS,
            config.hidden,
            config.hidden,
            depth=2,
            activation=jax.nn.gelu,
            key=k_net,
        )
        self.query_head = eqx.nn.Linear(config.hidden, config.width, key=k_query)
        self.key_head = eqx.nn.Linear(config.hidden, config.width, key=k_key)
        self.bias_head = eqx.nn.Linear(config.hidden, "scalar", key=k_bias)
        self.relation_bias = jnp.zeros(len(RELATIONS), jnp.float32)

    def encode_task(self, obs: ProgramTask) -> ProgramEncoding:  # type: ignore[override]
        kinds = jnp.clip(obs.kinds, 0, self.config.kinds - 1)
        task = jnp.broadcast_to(obs.task_stats, (obs.kinds.shape[0], TASK_STATS))
        features = jnp.concatenate([self.kind_embedding[kinds], obs.item_stats, task], axis=1)
        hidden = jax.vmap(self.item_net)(features)
        return ProgramEncoding(
            jax.vmap(self.query_head)(hidden),
            jax.vmap(self.key_head)(hidden),
            jax.vmap(self.bias_head)(hidden),
            obs.valid,
            obs.parents,
            self.relation_bias,
        )

    def act(self, obs: ProgramStep, task: ProgramEncoding) -> ItemDistribution:  # type: ignore[override]
        scale = 1.0 / jnp.sqrt(jnp.float32(self.config.width))
        logits = task.key @ task.query[obs.previous] * scale + task.bias
        logits = logits + task.relation_logits(obs.previous[None])[0]
        return ItemDistribution(logits.astype(jnp.float32), task.valid)

    def chain_logits(self, obs: ProgramTask) -> Float32[Array, "C C"]:
        """Every row of the chain at once: ``[previous, next]`` (invalid items at -1e9)."""
        task = self.encode_task(obs)
        scale = 1.0 / jnp.sqrt(jnp.float32(self.config.width))
        logits = task.query @ task.key.T * scale + task.bias[None]
        logits = logits + task.relation_logits(jnp.arange(obs.kinds.shape[0]))
        return jnp.where(task.valid[None], logits, -1e9).astype(jnp.float32)
