"""Programs learned from reward: a policy per task, learned from scratch by GRPO on the task's
demonstration pairs alone.

The policy is a distribution over programs of ``program_length`` actions, each drawn from
the task's vocabulary (:mod:`jaxarc.solve.program_tasks`: whole-grid actions and, with
``LearnerVariant(language=True)``, the content language's items). Its parameters are one
row of logits per previous action, ``[C, C]`` (a chain; or one row per step, ``[T, C]``),
starting with every action equally likely but the stop, at ``noop_prior`` (or from a
prior over kinds, :mod:`jaxarc.solve.program_prior`, or from a program network,
:mod:`jaxarc.solve.program_network`). An update samples ``group_size`` programs, plays each
on every demonstration input with the environment's own step code, and rewards it by what
it made of the demonstration outputs (the cells that match, the pairs solved, a bonus when
all are, a cost per action); the advantage is the reward normalised within the group
(GRPO), and one Adam step follows the policy gradient. The test inputs play no part in
learning; :mod:`jaxarc.solve.program_attempts` plays what was learned on them.

Static and traced: the config, the canvas and the task's paddings are static (see
:mod:`jaxarc.solve.program_tasks`); the task's grids, vocabulary and key are traced. The
whole learning of a task (updates and steps, ``lax.scan``; programs and grids, ``vmap``)
is one call.
"""

from __future__ import annotations

import dataclasses
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray

from jaxarc.solve.language.vocabulary import LanguageVocabulary
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_play import program_returns
from jaxarc.solve.program_tasks import (
    StartLogits,
    TaskArrays,
    full_prior,
    task_arrays,
    task_language,
)
from jaxarc.solve.program_variant import ADOPTED, LearnerVariant
from jaxarc.solve.replay import MAX_STEPS


class ProgramRLError(ValueError):
    """A setting the learner cannot use (with the reason)."""


@dataclasses.dataclass(frozen=True)
class ProgramRLConfig:
    """How each task's program policy learns.

    ``updates`` GRPO updates of ``group_size`` sampled programs of at most
    ``program_length`` actions; ``learning_rate`` of Adam on the logits. The reward of a
    program is the mean over demonstrations of (pair solved + share of matching cells) / 2,
    plus ``success_bonus`` when every pair is solved, less ``action_cost`` per action that
    is not the no-op. ``noop_prior``: the no-op's starting probability.
    ``exploring_starts``: that many programs of every group explore: they replay a prefix
    of the best program found so far (its length drawn uniformly), then draw one action
    uniformly from the vocabulary, not from the policy (neither is credited to it), so
    actions that score only after others keep being tried where the best program has got
    to. The learner's design (step credit, a chain policy, the memory of the best program,
    hindsight stops, one restart) is fixed; its experimental alternatives are a
    :class:`~jaxarc.solve.program_variant.LearnerVariant`, for ablations only."""

    updates: int = 600
    group_size: int = 64
    program_length: int = 16
    learning_rate: float = 0.03
    success_bonus: float = 1.0
    action_cost: float = 0.002
    noop_prior: float = 0.1
    exploring_starts: int = 16

    def __post_init__(self) -> None:
        if self.updates < 0:
            raise ProgramRLError(f"ProgramRLConfig.updates={self.updates}: at least 0")
        for name in ("group_size", "program_length"):
            if getattr(self, name) < 1:
                raise ProgramRLError(f"ProgramRLConfig.{name}={getattr(self, name)}: at least 1")
        if self.group_size < 2:
            raise ProgramRLError(
                f"ProgramRLConfig.group_size={self.group_size}: GRPO compares at least 2"
            )
        if self.program_length > MAX_STEPS:
            raise ProgramRLError(
                f"ProgramRLConfig.program_length={self.program_length}: at most {MAX_STEPS}"
            )
        if not 0 <= self.noop_prior < 1:
            raise ProgramRLError(f"ProgramRLConfig.noop_prior={self.noop_prior}: in [0, 1)")
        if not 0 <= self.exploring_starts <= self.group_size:
            raise ProgramRLError(
                f"ProgramRLConfig.exploring_starts={self.exploring_starts}: in 0 .. at most "
                f"group_size={self.group_size}"
            )
        if self.learning_rate <= 0:
            raise ProgramRLError(
                f"ProgramRLConfig.learning_rate={self.learning_rate}: must be more than 0"
            )

    @property
    def program_steps_per_update(self) -> int:
        """Program steps one update plays on each demonstration pair."""
        return self.group_size * self.program_length

    @property
    def program_steps_per_task(self) -> int:
        """Program steps the learning of a task plays on each of its demonstration pairs."""
        return self.updates * self.program_steps_per_update


def _masked(logits: Float32[Array, "R C"], valid: Bool[Array, " C"]) -> Float32[Array, "R C"]:
    return jnp.where(valid[None], logits, -jnp.inf)


def sample_programs(
    logits: Float32[Array, "R C"],
    valid,
    key: PRNGKeyArray,
    config: ProgramRLConfig,
    memory: Int32[Array, " T"] | None = None,
    variant: LearnerVariant = ADOPTED,
):
    """``group_size`` programs ``[G, T]``, the logits row each step drew from, and whether
    the step was chosen (a ``"chain"`` policy draws each action from the row of the action
    before it, the no-op's row first, and stops at its first no-op).

    The first ``exploring_starts`` programs explore: each replays the first ``k`` actions
    of ``memory`` (the best program so far; ``k`` drawn uniformly from 0 to its length,
    always 0 without one), then draws one action uniformly from the vocabulary, then
    follows the policy; the replayed and the uniform steps are not the policy's choice."""
    logits = _masked(logits, valid)
    exploring = jnp.arange(config.group_size) < config.exploring_starts
    # the uniform action and the cut of the memory, drawn once with keys no step uses
    any_action = jnp.where(valid & (jnp.arange(valid.shape[0]) > 0), 0.0, -jnp.inf)
    start_key = jax.random.fold_in(key, config.program_length)
    cut_key = jax.random.fold_in(key, config.program_length + 1)
    uniform = jax.random.categorical(start_key, any_action, shape=(config.group_size,))
    if memory is None or not variant.explore_from_memory:
        memory = jnp.zeros(config.program_length, jnp.int32)
    memory = jnp.asarray(memory)
    length = jnp.sum(jnp.cumprod(memory != 0))  # actions before the memory's first stop
    # (the uniform step must fit: a full-length memory is cut one action short)
    longest = jnp.minimum(length, config.program_length - 1)
    cut = jax.random.randint(cut_key, (config.group_size,), 0, longest + 1)

    def step(carry, t: Int32[Array, ""]):
        previous, stopped = carry
        row = previous if variant.policy == "chain" else jnp.full_like(previous, t)
        drawn = jax.random.categorical(jax.random.fold_in(key, t), logits[row], axis=-1)
        replay = exploring & (t < cut)
        explore = exploring & (t == cut)
        drawn = jnp.where(replay, memory[t], jnp.where(explore, uniform, drawn))
        drawn = jnp.where(stopped, 0, drawn)
        chosen = ~stopped & ~explore & ~replay
        stopped = stopped | ((drawn == 0) & (variant.policy == "chain"))
        return (drawn, stopped), (drawn, row, chosen)

    start = (jnp.zeros(config.group_size, jnp.int32), jnp.zeros(config.group_size, bool))
    _, (programs, rows, chosen) = jax.lax.scan(
        step, start, jnp.arange(config.program_length, dtype=jnp.int32)
    )
    return programs.T, rows.T, chosen.T


def rows_and_chosen(program: Int32[Array, " T"], variant: LearnerVariant = ADOPTED):
    """The logits row each step of ``program`` draws from, and whether it is chosen."""
    steps = jnp.arange(program.shape[0], dtype=jnp.int32)
    if variant.policy == "per-step":
        return steps, jnp.ones(program.shape, bool)
    previous = jnp.concatenate([jnp.zeros(1, jnp.int32), program[:-1]])
    stops = (program == 0).astype(jnp.int32)
    stopped_before = jnp.cumsum(stops) - stops
    return previous, stopped_before == 0


def best_prefixes(
    programs: Int32[Array, "G T"],
    prefix_reward: Float32[Array, "G T1"],
    prefix_solved: Bool[Array, "G T1"],
) -> tuple[Int32[Array, "G T"], Float32[Array, " G"], Bool[Array, " G"]]:
    """Each program cut where it earned most (the first best, so the shortest; the no-op
    after the cut), with what it earned and whether it solved there."""
    stop = jnp.argmax(prefix_reward, axis=1)
    kept = jnp.where(jnp.arange(programs.shape[1])[None] < stop[:, None], programs, 0)
    take = jnp.take_along_axis
    return (
        kept,
        take(prefix_reward, stop[:, None], axis=1)[:, 0],
        take(prefix_solved, stop[:, None], axis=1)[:, 0],
    )


def grpo_step(
    logits_of,
    params,
    task: TaskArrays,
    key: PRNGKeyArray,
    config: ProgramRLConfig,
    side: int,
    memory: Int32[Array, " T"] | None = None,
    variant: LearnerVariant = ADOPTED,
):
    """One GRPO update's gradient for ``params`` (``logits_of(params)`` gives the task's
    ``[R, C]`` logits), and the programs, rewards and successes. With a ``memory`` (the
    best program found so far), it takes the place of the group's last sample, so the
    policy is pulled towards the best it has found while the others explore around it (a
    memory buffer of one, as in memory-augmented policy optimisation)."""
    programs, rows, chosen = sample_programs(
        logits_of(params), task.valid, key, config, memory, variant
    )
    if memory is not None:
        memory_rows, memory_chosen = rows_and_chosen(memory, variant)
        programs = programs.at[-1].set(memory)
        rows, chosen = rows.at[-1].set(memory_rows), chosen.at[-1].set(memory_chosen)
    to_go, reward, prefix_reward, prefix_solved = program_returns(task, programs, config, side)
    solved = prefix_solved[:, -1]
    # "step": each step by what follows it; "program": every step by the whole reward
    whole = jnp.broadcast_to(reward[:, None], to_go.shape)
    credit = to_go if variant.credit == "step" else whole
    advantage = (credit - credit.mean(0, keepdims=True)) / (credit.std(0, keepdims=True) + 1e-6)

    def loss(params) -> Float32[Array, ""]:
        log_probs = jax.nn.log_softmax(_masked(logits_of(params), task.valid), axis=-1)[rows]
        taken = jnp.take_along_axis(log_probs, programs[..., None], axis=2)[..., 0]
        return -jnp.mean(jnp.sum(jnp.where(chosen, advantage * taken, 0.0), axis=1))

    if variant.hindsight_stop:  # each program as if it had stopped at its best step
        kept, kept_reward, kept_solved = best_prefixes(programs, prefix_reward, prefix_solved)
    else:
        kept, kept_reward, kept_solved = programs, reward, solved
    return jax.grad(loss)(params), kept, kept_reward, kept_solved, reward, solved


def uniform_logits(
    valid: Bool[Array, " C"], config: ProgramRLConfig, variant: LearnerVariant = ADOPTED
) -> Float32[Array, "R C"]:
    """Every action equally likely, but the no-op (a chain's stop) at ``noop_prior``."""
    rows = valid.shape[0] if variant.policy == "chain" else config.program_length
    others = jnp.maximum(jnp.sum(valid) - 1, 1).astype(jnp.float32)
    noop = jnp.log(config.noop_prior * others / (1 - config.noop_prior) + 1e-9)
    return jnp.zeros((rows, valid.shape[0]), jnp.float32).at[:, 0].set(noop)


class Learned(eqx.Module):
    """What learning one task gives: the logits, the best sampled program ``[T]``
    (vocabulary rows) and its reward, the update at which a sampled program first solved
    every demonstration (``-1``: never), and per update the group's mean reward and share of
    programs that solved every demonstration."""

    logits: Float32[Array, "R C"]
    best_program: Int32[Array, " T"]
    best_reward: Float32[Array, ""]
    first_solved: Int32[Array, ""]
    mean_reward: Float32[Array, " U"]
    solved_share: Float32[Array, " U"]


@functools.cache
def _learn_program(config: ProgramRLConfig, side: int, variant: LearnerVariant):
    """The compiled learning of one task from ``init`` logits (static: config, canvas,
    variant)."""
    optimizer = optax.adam(optax.constant_schedule(config.learning_rate))

    def learn(key: PRNGKeyArray, task: TaskArrays, init: Float32[Array, "R C"]) -> Learned:
        def update(carry, index: Int32[Array, ""]):
            logits, opt_state, best_program, best_reward, first_solved = carry
            grads, kept, kept_reward, kept_solved, reward, solved = grpo_step(
                lambda p: p,
                logits,
                task,
                jax.random.fold_in(key, index),
                config,
                side,
                best_program if variant.memory else None,
                variant,
            )
            grads = jnp.where(task.valid[None], grads, 0.0)
            with jax.numpy_dtype_promotion("standard"):  # optax mixes int32 counts and floats
                steps, opt_state = optimizer.update(grads, opt_state, logits)
            logits = optax.apply_updates(logits, steps)
            top = jnp.argmax(kept_reward)
            better = kept_reward[top] > best_reward
            best_program = jnp.where(better, kept[top], best_program)
            best_reward = jnp.where(better, kept_reward[top], best_reward)
            found = jnp.any(kept_solved)
            first_solved = jnp.where((first_solved < 0) & found, index, first_solved)
            carry = (logits, opt_state, best_program, best_reward, first_solved)
            return carry, (reward.mean(), solved.mean())

        carry = (
            init,
            optimizer.init(init),
            jnp.zeros(config.program_length, jnp.int32),
            jnp.float32(-jnp.inf),
            jnp.int32(-1),
        )
        carry, (mean_reward, solved_share) = jax.lax.scan(
            update, carry, jnp.arange(config.updates, dtype=jnp.int32)
        )
        logits, _, best_program, best_reward, first_solved = carry
        return Learned(
            _masked(logits, task.valid),
            best_program,
            best_reward,
            first_solved,
            mean_reward,
            solved_share,
        )

    return jax.jit(learn)


def learn_program(
    problem: Problem,
    config: ProgramRLConfig,
    key: PRNGKeyArray,
    prior: Float32[Array, "K K"] | None = None,
    variant: LearnerVariant = ADOPTED,
    language: LanguageVocabulary | None = None,
    start_logits: StartLogits | None = None,
) -> tuple[Learned, Int32[np.ndarray, "C N 5"], int]:
    """Learn ``problem``'s program policy from its demonstrations, starting from the
    ``prior`` over action kinds (a ``"chain"`` policy; a prior over the whole-grid kinds
    alone gives the language's kinds 0, :func:`full_prior`) or, without one, from
    :func:`uniform_logits`: ``(what was learned, the vocabulary, the canvas side)``. With
    ``variant.language``, the vocabulary holds the task's language items too (``language``:
    :func:`~jaxarc.solve.program_tasks.task_language`, made here if ``None``).
    ``start_logits``: the starting logits from the task's arrays and canvas side (a trained
    program network, :func:`jaxarc.solve.program_network.network_start`), in place of a
    prior (a chain policy)."""
    if variant.language and language is None:
        language = task_language(problem)
    arrays, table, side = task_arrays(problem, language if variant.language else None)
    if start_logits is not None:
        if prior is not None or variant.policy != "chain":
            raise ProgramRLError("starting logits need a chain policy and no prior")
        init = start_logits(arrays, side)
    elif prior is None:
        init = uniform_logits(arrays.valid, config, variant)
    elif variant.policy != "chain":
        raise ProgramRLError(f"a prior over kinds needs a chain policy, not {variant.policy!r}")
    else:
        if variant.language:
            prior = full_prior(np.asarray(prior))
        init = jnp.asarray(prior)[arrays.kinds[:, None], arrays.kinds[None, :]]
    learn = _learn_program(config, side, dataclasses.replace(variant, restarts=1))
    learned = learn(key, arrays, init)
    return jax.device_get(learned), table, side
