"""A program network trained across ARC tasks by the GRPO trainer's own step.

One :class:`~jaxarc.agents.model.program_policy.ProgramPolicy` scores the items of any
task's vocabulary (whole-grid actions and the content language's views and paints,
:func:`~jaxarc.solve.program_tasks.task_arrays`) given the item before it. Training plays its
programs on the demonstrations of many tasks and learns from their reward:

* an **episode** is a program of up to ``program_length`` items, sampled from the
  network's chain logits and played by the environment's own step code on every
  demonstration input of its task (:func:`~jaxarc.solve.program_play.program_returns`);
* its **reward** is what program-rl's learner earns: the pairs solved and the cells right,
  a bonus when every pair is solved, a cost per action;
* a **group** is ``group_size`` programs of one task; with ``memory``, the best program
  found so far for that task (cut where it earned most) takes the group's last place, as
  in program-rl's memory of one;
* with ``hindsight_tasks``, some of an update's tasks are **relabelled** ones: a program
  the network sampled on a training task that acts but does not solve it, with the grids
  it made as the demonstration outputs, so that it is a solution (hindsight relabelling,
  as in CodeIt);
* an **update** plays ``tasks_per_update`` groups and runs
  :func:`jaxarc.agents.grpo.train.optimise_on_batch`: the same epochs of clipped-surrogate
  steps (:func:`jaxarc.agents.grpo.train_step.surrogate_step`), KL reference and optimiser
  (:func:`~jaxarc.agents.grpo.train_step.make_optimizer`) as ``jaxarc train``. With a
  ``mesh`` the episodes are sharded over its ``data`` axis.

Static and traced: each task is padded to program-rl's buckets (canvas, demonstrations,
vocabulary rows, mask actions) and its rollouts compile once per bucket; the network reads
every task padded to :data:`ITEM_SLOTS` items, so its update compiles once.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from collections.abc import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jaxtyping import Array, Float32, PRNGKeyArray

from jaxarc.agents.grpo.advantages import compute_advantages
from jaxarc.agents.grpo.config import GRPOConfig, TrainConfig
from jaxarc.agents.grpo.loss import TrainingBatchJAX, policy_log_probs_and_entropy
from jaxarc.agents.grpo.train import optimise_on_batch
from jaxarc.agents.grpo.train_state import Metrics, TrainState, episode_constraint
from jaxarc.agents.grpo.train_step import make_optimizer
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.agents.model.program_policy import (
    ProgramPolicy,
    ProgramPolicyConfig,
    ProgramStep,
    ProgramTask,
)
from jaxarc.solve.network_tasks import (
    ITEM_SLOTS,
    NetworkTask,
    network_reads,
    network_task,
    relabelled_task,
)
from jaxarc.solve.program_rl import (
    ProgramRLConfig,
    best_prefixes,
    program_returns,
    rows_and_chosen,
    sample_programs,
    uniform_logits,
)
from jaxarc.solve.program_tasks import (
    ALL_KINDS,
    StartLogits,
    TaskArrays,
)

HINDSIGHT_POOL = 256  # relabelled tasks kept to draw from (the newest)


@dataclasses.dataclass(frozen=True)
class ProgramNetworkConfig:
    """How the network trains: ``updates`` updates of ``tasks_per_update`` groups of
    ``group_size`` programs of at most ``program_length`` items; ``learning_rate`` (Adam,
    gradients clipped at ``max_grad_norm``); ``grpo``: the surrogate's epochs,
    minibatches, clipping and KL; ``memory``: the best program found for a task joins its
    group; ``hindsight_tasks``: that many of an update's tasks are relabelled ones
    (:func:`relabelled_task`: a program the network sampled, its own grids as the
    outputs), drawn from the last :data:`HINDSIGHT_POOL` made; ``policy``: the network's
    widths. The reward is program-rl's
    (:class:`~jaxarc.solve.program_rl.ProgramRLConfig`'s bonus and cost)."""

    updates: int = 300
    tasks_per_update: int = 8
    group_size: int = 32
    program_length: int = 8
    learning_rate: float = 1e-3
    max_grad_norm: float = 1.0
    grpo: GRPOConfig = GRPOConfig(epochs=2, minibatches=2, beta=0.0)
    memory: bool = True
    hindsight_tasks: int = 0
    policy: ProgramPolicyConfig = ProgramPolicyConfig(kinds=ALL_KINDS)

    def __post_init__(self) -> None:
        for name in ("updates", "tasks_per_update", "group_size", "program_length"):
            if getattr(self, name) < (2 if name == "group_size" else 1):
                raise ValueError(f"ProgramNetworkConfig.{name}={getattr(self, name)}: too small")
        if not 0 <= self.hindsight_tasks < self.tasks_per_update:
            raise ValueError(
                f"ProgramNetworkConfig.hindsight_tasks={self.hindsight_tasks}: in 0 .. "
                f"tasks_per_update - 1 = {self.tasks_per_update - 1}"
            )
        if (self.tasks_per_update * self.group_size) % self.grpo.minibatches:
            raise ValueError(
                "ProgramNetworkConfig: tasks_per_update x group_size must divide into "
                f"grpo.minibatches={self.grpo.minibatches}"
            )

    def reward(self) -> ProgramRLConfig:
        """The learner's settings that define the reward and the sampling."""
        return ProgramRLConfig(
            group_size=self.group_size, program_length=self.program_length, exploring_starts=0
        )

    def optimizer(self):
        train = TrainConfig(
            num_updates=max(self.updates, 1),
            lr=self.learning_rate,
            max_grad_norm=self.max_grad_norm,
            grpo=self.grpo,
        )
        return make_optimizer(train)


@functools.cache
def _rollout_fn(reward: ProgramRLConfig, side: int) -> Callable:
    """One task's group: programs ``[G, T]``, the row each step drew from, whether the
    policy chose it, the reward ``[G]``, whether it solved, and the best prefix of each."""

    def rollout(task: TaskArrays, logits, key, memory):
        programs, rows, chosen = sample_programs(logits, task.valid, key, reward)
        use_memory = jnp.any(memory != 0)
        previous, memory_chosen = rows_and_chosen(memory)
        programs = programs.at[-1].set(jnp.where(use_memory, memory, programs[-1]))
        rows = rows.at[-1].set(jnp.where(use_memory, previous, rows[-1]))
        chosen = chosen.at[-1].set(jnp.where(use_memory, memory_chosen, chosen[-1]))
        _, total, prefix_reward, prefix_solved = program_returns(task, programs, reward, side)
        kept, kept_reward, kept_solved = best_prefixes(programs, prefix_reward, prefix_solved)
        return programs, rows, chosen, total, prefix_solved[:, -1], kept, kept_reward, kept_solved

    return jax.jit(rollout)


@functools.cache
def _chain_logits_fn() -> Callable:
    return policy_jit(lambda policy, reads: jax.vmap(policy.chain_logits)(reads))


def chain_logits(policy: ProgramPolicy, reads: Sequence[ProgramTask]) -> np.ndarray:
    """The network's ``[previous, next]`` logits of each task ``[K, ITEM_SLOTS, ITEM_SLOTS]``."""
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *reads)
    return np.asarray(_chain_logits_fn()(policy, stacked))


def make_update(config: ProgramNetworkConfig, mesh: Mesh | None = None) -> Callable:
    """The compiled update ``(state, batch) -> (state, metrics)``: the sampling and
    reference log-probabilities of ``batch`` under ``state``, then
    :func:`~jaxarc.agents.grpo.train.optimise_on_batch` (state buffers donated)."""
    optimizer, constrain = config.optimizer(), episode_constraint(mesh)

    def update(state: TrainState, batch: TrainingBatchJAX) -> tuple[TrainState, Metrics]:
        key, shuffle_key = jax.random.split(state.key)

        def log_probs(policy):
            values, _ = policy_log_probs_and_entropy(
                policy, batch.obs, batch.actions, batch.task_obs, batch.task_index
            )
            return jax.lax.stop_gradient(values)

        old = log_probs(state.policy)
        ref = log_probs(state.ref_policy) if config.grpo.beta > 0 else old
        batch = dataclasses.replace(batch, old_log_probs=old, ref_log_probs=ref)
        policy, ref_policy, opt_state, steps = optimise_on_batch(
            state, constrain(batch), shuffle_key, config.grpo, optimizer, constrain
        )
        metrics = {name: jnp.mean(values) for name, values in steps.items()}
        index = state.update_index + 1
        return TrainState(policy, ref_policy, opt_state, key, index), metrics

    return policy_jit(update, donate="all")


def init_state(key: PRNGKeyArray, config: ProgramNetworkConfig) -> TrainState:
    """A fresh network, its reference (own buffers) and optimiser state."""
    policy_key, state_key = jax.random.split(key)
    policy = ProgramPolicy(policy_key, config.policy)
    with jax.numpy_dtype_promotion("standard"):
        opt_state = config.optimizer().init(eqx.filter(policy, eqx.is_inexact_array))
    ref = jax.tree.map(lambda x: jnp.array(x, copy=True) if eqx.is_array(x) else x, policy)
    return TrainState(policy, ref, opt_state, state_key, jnp.int32(0))


def training_batch(
    tasks: Sequence[NetworkTask],
    logits: np.ndarray,
    key: PRNGKeyArray,
    config: ProgramNetworkConfig,
    memory: dict[str, tuple[np.ndarray, float]],
) -> tuple[TrainingBatchJAX, dict]:
    """Play one group per task from the network's ``logits`` and make the batch (its
    log-probabilities are filled in by the update); ``memory`` (task id -> best program
    and its reward) is updated in place. The statistics hold, per task, the best sampled
    program that acts but does not solve (``misses``; ``None``: none), for hindsight."""
    reward = config.reward()
    steps, actions, valid, advantages, rewards, solved = [], [], [], [], [], []
    misses: list[np.ndarray | None] = []
    empty = np.zeros(config.program_length, np.int32)
    for k, task in enumerate(tasks):
        rows = task.arrays.valid.shape[0]
        best, best_reward = memory.get(task.task_id, (empty, -np.inf))
        played = _rollout_fn(reward, task.side)(
            task.arrays,
            jnp.asarray(logits[k, :rows, :rows]),
            jax.random.fold_in(key, k),
            jnp.asarray(best if config.memory else empty),
        )
        programs, previous, chosen, total, success, kept, kept_reward, kept_solved = map(
            np.asarray, played
        )
        top = int(np.argmax(kept_reward))
        if kept_reward[top] > best_reward:
            memory[task.task_id] = (kept[top].astype(np.int32), float(kept_reward[top]))
        # the best program that acts and does not solve: what hindsight relabels
        near = np.where(~kept_solved & (kept != 0).any(1), kept_reward, -np.inf)
        misses.append(kept[int(np.argmax(near))] if np.isfinite(near.max()) else None)
        steps.append(previous), actions.append(programs), valid.append(chosen)
        rewards.append(total), solved.append(success)
    rewards_kg = np.stack(rewards).astype(np.float32)
    per_program, _ = compute_advantages(jnp.asarray(rewards_kg), config.grpo.advantage)
    advantages = np.repeat(np.asarray(per_program).reshape(-1, 1), config.program_length, 1)
    zeros = np.zeros(advantages.shape, np.float32)
    batch = TrainingBatchJAX(
        obs=ProgramStep(jnp.asarray(np.concatenate(steps), jnp.int32)),
        actions=jnp.asarray(np.concatenate(actions), jnp.int32),
        old_log_probs=jnp.asarray(zeros),
        ref_log_probs=jnp.asarray(zeros),
        advantages=jnp.asarray(advantages),
        valid=jnp.asarray(np.concatenate(valid)),
        task_obs=jax.tree.map(lambda *x: jnp.stack(x), *(t.reads for t in tasks)),
        task_index=jnp.asarray(np.repeat(np.arange(len(tasks)), config.group_size), jnp.int32),
    )
    solved_kg = np.stack(solved)
    stats = {
        "mean_reward": float(rewards_kg.mean()),
        "solved_share": float(solved_kg.mean()),
        "solved_tasks": [t.task_id for t, s in zip(tasks, solved_kg, strict=True) if s.any()],
        "misses": misses,
    }
    return batch, stats


def train_program_network(
    tasks: Sequence[NetworkTask],
    config: ProgramNetworkConfig,
    key: PRNGKeyArray,
    *,
    mesh: Mesh | None = None,
    on_update: Callable[[int, dict[str, float], ProgramPolicy], None] | None = None,
) -> tuple[ProgramPolicy, list[dict[str, float]]]:
    """Train a network on ``tasks`` (see the module docstring): ``(policy, per update its
    metrics)``. Each update draws ``tasks_per_update`` tasks without replacement (with
    ``hindsight_tasks``, that many from the relabelled pool once it holds them);
    ``on_update(index, metrics, policy)`` sees every update's result."""
    if len(tasks) < config.tasks_per_update:
        raise ValueError(f"{len(tasks)} tasks: fewer than tasks_per_update")
    init_key, order_key = jax.random.split(key)
    names = {task.task_id for task in tasks}
    state = init_state(init_key, config)
    update = make_update(config, mesh)
    rng = np.random.default_rng(np.asarray(jax.random.key_data(order_key)))
    memory: dict[str, tuple[np.ndarray, float]] = {}
    found: set[str] = set()  # tasks some sampled program solved
    pool: deque[NetworkTask] = deque(maxlen=HINDSIGHT_POOL)  # relabelled tasks, newest last
    history: list[dict[str, float]] = []
    for index in range(config.updates):
        relabelled = min(config.hindsight_tasks, len(pool))
        real = config.tasks_per_update - relabelled
        chosen = [tasks[i] for i in rng.choice(len(tasks), real, False)]
        chosen += [pool[i] for i in rng.choice(len(pool), relabelled, False)]
        logits = chain_logits(state.policy, [t.reads for t in chosen])
        batch, stats = training_batch(
            chosen, logits, jax.random.fold_in(state.key, 1), config, memory
        )
        found.update(t for t in stats.pop("solved_tasks") if t in names)
        for task, program in zip(chosen[:real], stats.pop("misses")[:real], strict=True):
            made = None
            if config.hindsight_tasks and program is not None:
                made = relabelled_task(task, program, config.reward())
            if made is not None and made.task_id not in memory:
                memory[made.task_id] = (program.astype(np.int32), -np.inf)  # its solution
                pool.append(made)
        state, metrics = update(state, batch)
        record = {**stats, **{k: float(v) for k, v in metrics.items()}}
        record["tasks_found"] = len(found)
        history.append(record)
        if on_update is not None:
            on_update(index, record, state.policy)
    return state.policy, history


def network_start(
    policy: ProgramPolicy, reward: ProgramRLConfig, uniform_share: float = 0.0
) -> StartLogits:
    """program-rl's starting logits from the network: ``(arrays, side) -> [C, C]`` for a
    task's padded arrays (:func:`~jaxarc.solve.program_rl.learn_program`'s
    ``start_logits``). With ``uniform_share`` ``e`` each row is the mixture ``(1 - e) *
    network + e * uniform start`` (:func:`~jaxarc.solve.program_rl.uniform_logits`), so
    every item keeps a floor of probability for the per-task learning to explore from."""
    if not 0.0 <= uniform_share <= 1.0:
        raise ValueError(f"uniform_share={uniform_share}: in [0, 1]")

    def start(arrays: TaskArrays, side: int) -> Float32[Array, "C C"]:
        rows = arrays.valid.shape[0]
        logits = chain_logits(policy, [network_reads(arrays, side, reward)])[0][:rows, :rows]
        if uniform_share == 0.0:
            return jnp.asarray(logits)
        valid = np.asarray(arrays.valid)
        uniform = np.asarray(uniform_logits(arrays.valid, reward))
        mixed = (1 - uniform_share) * _softmax(logits, valid) + uniform_share * _softmax(
            uniform, valid
        )
        return jnp.asarray(np.where(valid[None], np.log(np.maximum(mixed, 1e-30)), -1e9))

    return start


def _softmax(logits: np.ndarray, valid: np.ndarray) -> np.ndarray:
    masked = np.where(valid[None], logits, -np.inf)
    shifted = np.exp(masked - masked.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


__all__ = [
    "ITEM_SLOTS",
    "NetworkTask",
    "ProgramNetworkConfig",
    "chain_logits",
    "init_state",
    "make_update",
    "network_reads",
    "network_start",
    "network_task",
    "relabelled_task",
    "train_program_network",
    "training_batch",
]
