"""Programs learned from reward: a policy per task, learned from scratch by GRPO on the task's
demonstration pairs alone, then played on its test inputs.

The policy is a distribution over programs of ``program_length`` environment actions, each
drawn from the task's **vocabulary** (:func:`program_vocabulary`): a no-op (so a program may
be shorter), the search's candidate actions (:mod:`jaxarc.solve.candidates`) and the actions
that lay out a tiling tile by tile (:func:`jaxarc.solve.tiling.tile_layout_actions`); with
``LearnerVariant(language=True)``, also the content language's items, the search's safe
paints played as mask actions (:mod:`jaxarc.solve.language.vocabulary`; the search and the
learner draw from one language; a step plays a row's bbox action, then its mask actions,
:mod:`jaxarc.solve.mixed_replay`). Its
parameters are one row of logits per previous action, ``[C, C]`` (a chain; or one row per
step, ``[T, C]``), starting with every action equally likely but the stop, at
``noop_prior`` (or from a prior, :mod:`jaxarc.solve.program_prior`): no network, no expert
and no search. An update samples
``group_size`` programs, plays each on every demonstration input with the environment's own
step code, and rewards it by what it made of the demonstration outputs (the cells that
match, the pairs solved, a bonus when all are, a cost per action); the advantage is the
reward normalised within the group (GRPO), and one Adam step follows the policy gradient.
The test inputs play no part in learning.

After learning, the most likely program (the arg-max of each step's logits) and the best
program the learning sampled are replayed by the environment on the task's 30x30 canvas
(:func:`jaxarc.solve.replay.replay_on_task`); those that solve every demonstration come
first, and the first two with different test grids are the two attempts.

Static and traced: a task is learned on the smallest canvas of
:data:`~jaxarc.solve.canvas.CANVAS_SIDES` that holds its grids, with its demonstrations
padded to a count of :data:`DEMO_SLOTS` and its vocabulary to :data:`VOCABULARY_SLOTS` rows;
the config, the canvas and the two paddings are static (one compiled program each, and
one per bucket of mask actions an item plays, with the language), the task's grids,
vocabulary and key are traced. The whole learning of a task (updates and
steps, ``lax.scan``; programs and grids, ``vmap``) is one call.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.operations import GridState
from jaxarc.solve.attempts import describe_sequence, pick_attempts
from jaxarc.solve.candidates import candidate_actions
from jaxarc.solve.canvas import bucket, canvas_side
from jaxarc.solve.language.vocabulary import LANGUAGE_KINDS, LanguageVocabulary, language_vocabulary
from jaxarc.solve.mixed_replay import bbox_action, mask_action, replay_mixed
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_variant import ADOPTED, LearnerVariant
from jaxarc.solve.replay import MAX_STEPS, replay_on_task
from jaxarc.solve.search import pad_slots
from jaxarc.solve.tiling import tile_layout_actions

DEMO_SLOTS = (4, 6, 10)  # demonstration pairs, padded up to one of these
VOCABULARY_SLOTS = (64, 128, 256)  # vocabulary rows, padded up to one of these
NOOP = (-1, 0, 0, 0, 0)  # the environment's no-op (an unknown operation)


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


def program_vocabulary(problem: Problem) -> Int32[np.ndarray, "C N 5"]:
    """The actions a program of ``problem`` is made of, one row ``(operation, r1, c1, r2,
    c2)`` per grid (demonstration inputs, then test inputs): the no-op first, then the
    search's candidates, then the tile-layout actions; duplicates removed."""
    grids = problem.num_demos + problem.num_tests
    noop = np.tile(np.asarray(NOOP, np.int32), (1, grids, 1))
    table = np.concatenate([noop, candidate_actions(problem), tile_layout_actions(problem)])
    _, first = np.unique(table.reshape(len(table), -1), axis=0, return_index=True)
    return table[np.sort(first)]


BOX_CLASSES = 5  # an action's box, for its kind: no-op, whole grid, (0, 0), another cell, a box


def action_kinds(table: Int32[np.ndarray, "C N 5"]) -> Int32[np.ndarray, " C"]:
    """The kind of each vocabulary action, shared by every task: its operation and the class
    of its box as the first grid has it (no-op, the whole grid, the cell (0, 0), another
    cell, any other box), ``(operation + 1) * BOX_CLASSES + class``. A prior over
    kinds (:mod:`jaxarc.solve.program_prior`) carries from task to task what a vocabulary
    of concrete coordinates cannot."""
    first = table[:, 0]
    op, r1, c1, r2, c2 = (first[:, k] for k in range(5))
    whole = (r1 == 0) & (c1 == 0) & (r2 == 29) & (c2 == 29)
    cell = (r1 == r2) & (c1 == c2)
    origin = cell & (r1 == 0) & (c1 == 0)
    box_class = np.select([op < 0, whole, origin, cell], [0, 1, 2, 3], 4)
    return ((op + 1) * BOX_CLASSES + box_class).astype(np.int32)


NUM_KINDS = (ops.NUM_OPERATIONS + 1) * BOX_CLASSES  # the whole-grid actions' kinds
ALL_KINDS = NUM_KINDS + LANGUAGE_KINDS  # then the content language's items' kinds


def full_prior(prior: Float32[np.ndarray, "K K"]) -> Float32[np.ndarray, "A A"]:
    """``prior`` over the whole-grid actions' kinds widened to :data:`ALL_KINDS`: the
    language items' kinds (and every pair with one) start at 0."""
    prior = np.asarray(prior, np.float32)
    full = np.zeros((ALL_KINDS, ALL_KINDS), np.float32)
    full[: prior.shape[0], : prior.shape[1]] = prior
    return full


class TaskArrays(eqx.Module):
    """One task as its learning plays it, padded to static sizes: the vocabulary's rows per
    demonstration ``[C, D, 5]`` (unused rows are no-ops), which rows are real, their kinds,
    the demonstration inputs, shapes and outputs (``-1`` outside a grid), which of the
    ``D`` slots hold a demonstration, and each row's mask actions after its bbox action,
    operations ``[C, D, K]`` (``-1``: none) and masks ``[C, D, K, S, S]`` (``K = 0``
    without the content language; see :mod:`jaxarc.solve.mixed_replay`)."""

    table: Int32[Array, "C D 5"]
    valid: Bool[Array, " C"]
    kinds: Int32[Array, " C"]
    inputs: Int8[Array, "D H W"]
    shapes: Int32[Array, "D 2"]
    targets: Int8[Array, "D H W"]
    demo: Bool[Array, " D"]
    mask_ops: Int32[Array, "C D K"]
    masks: Bool[Array, "C D K H W"]


def program_returns(
    task: TaskArrays, programs: Int32[Array, "G T"], config: ProgramRLConfig, side: int
):
    """Play ``programs`` on every demonstration: per program and step what the program
    earns from that step on (the score's gain to the end, the bonus, the cost of the actions
    left) ``[G, T]``, the whole reward ``[G]``, and, had it stopped after ``t = 0 .. T``
    actions, what it would have earned and whether it would solve every demonstration
    ``[G, T+1]`` (the last column: the whole program)."""
    root = jax.vmap(GridState.create)(task.inputs, task.shapes)
    pairs = jnp.maximum(jnp.sum(task.demo), 1).astype(jnp.float32)

    def one_grid(state: GridState, row: Int32[Array, "5"], grid, shape) -> GridState:
        return bbox_action(state, row, grid, shape, side)

    def one_mask(state: GridState, operation, mask, grid, shape) -> GridState:
        return mask_action(state, operation, mask, grid, shape, side)

    def score(states: GridState) -> tuple[Float32[Array, ""], Bool[Array, ""]]:
        """The mean over demonstrations of (solved + share of matching cells) / 2, and
        whether every demonstration is solved."""
        equal = states.grid == task.targets
        union = (states.grid >= 0) | (task.targets >= 0)
        cells = jnp.maximum(jnp.sum(union, axis=(1, 2)), 1).astype(jnp.float32)
        share = jnp.sum(equal & union, axis=(1, 2)).astype(jnp.float32) / cells
        matched = jnp.all(equal, axis=(1, 2))
        pair_score = (matched.astype(jnp.float32) + share) / 2
        mean = jnp.sum(jnp.where(task.demo, pair_score, 0.0)) / pairs
        return mean, jnp.all(matched | ~task.demo)

    def apply(states: GridState, rows: Int32[Array, "D 5"]) -> GridState:
        return jax.vmap(one_grid)(states, rows, task.inputs, task.shapes)

    def apply_masks(states: GridState, operations, masks) -> GridState:
        return jax.vmap(one_mask)(states, operations, masks, task.inputs, task.shapes)

    def step(states: GridState, column: Int32[Array, " G"]):
        """Every program's action of one step; skipped when every program has stopped
        (the learner runs unbatched, so the branch is really not taken), and each of the
        ``K`` mask actions skipped when no program's row has one there."""
        states = jax.lax.cond(
            jnp.any(column != 0),
            lambda s: jax.vmap(apply)(s, task.table[column]),
            lambda s: s,
            states,
        )

        def mask_step(k: Int32[Array, ""], states: GridState) -> GridState:
            operations = task.mask_ops[column, :, k]  # [G, D]
            return jax.lax.cond(
                jnp.any(operations >= 0),
                lambda s: jax.vmap(apply_masks)(s, operations, task.masks[column, :, k]),
                lambda s: s,
                states,
            )

        if task.mask_ops.shape[-1]:  # static: none without the language
            states = jax.lax.fori_loop(0, task.mask_ops.shape[-1], mask_step, states)
        return states, jax.vmap(score)(states)

    group = jax.tree.map(lambda x: jnp.broadcast_to(x, (programs.shape[0], *x.shape)), root)
    _, (scores, solved) = jax.lax.scan(step, group, programs.T)  # [T, G] each
    first_score, first_solved = score(root)
    num = programs.shape[0]
    scores = jnp.concatenate([jnp.full((1, num), first_score), scores]).T  # [G, T+1]
    solved = jnp.concatenate([jnp.full((1, num), first_solved), solved]).T  # [G, T+1]
    acting = (programs != 0).astype(jnp.float32)
    costs_left = jnp.cumsum(acting[:, ::-1], axis=1)[:, ::-1] * config.action_cost
    bonus = config.success_bonus * solved[:, -1].astype(jnp.float32)
    to_go = scores[:, -1:] - scores[:, :-1] + bonus[:, None] - costs_left
    reward = scores[:, -1] + bonus - config.action_cost * acting.sum(1)
    # what each program would have earned had it stopped after t actions, t = 0 .. T
    spent = jnp.concatenate([jnp.zeros((num, 1)), jnp.cumsum(acting, axis=1)], axis=1)
    prefix_reward = (
        scores + config.success_bonus * solved.astype(jnp.float32) - config.action_cost * spent
    )
    return to_go, reward, prefix_reward, solved


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


def _rows_and_chosen(program: Int32[Array, " T"], variant: LearnerVariant):
    """The logits row each step of ``program`` draws from, and whether it is chosen."""
    steps = jnp.arange(program.shape[0], dtype=jnp.int32)
    if variant.policy == "per-step":
        return steps, jnp.ones(program.shape, bool)
    previous = jnp.concatenate([jnp.zeros(1, jnp.int32), program[:-1]])
    stops = (program == 0).astype(jnp.int32)
    stopped_before = jnp.cumsum(stops) - stops
    return previous, stopped_before == 0


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
        memory_rows, memory_chosen = _rows_and_chosen(memory, variant)
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
        stop = jnp.argmax(prefix_reward, axis=1)  # the first best (the shortest)
        steps = jnp.arange(programs.shape[1])
        kept = jnp.where(steps[None] < stop[:, None], programs, 0)
        take = jnp.take_along_axis
        kept_reward = take(prefix_reward, stop[:, None], axis=1)[:, 0]
        kept_solved = take(prefix_solved, stop[:, None], axis=1)[:, 0]
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


def task_arrays(
    problem: Problem, language: LanguageVocabulary | None = None
) -> tuple[TaskArrays, Int32[np.ndarray, "C N 5"], int]:
    """``problem`` as its learning plays it: ``(the padded arrays, the vocabulary, the
    canvas side)``. With ``language`` (the task's
    :func:`~jaxarc.solve.language.vocabulary.language_vocabulary`), its items follow the
    whole-grid actions as rows whose bbox action is the no-op (their kinds after
    :data:`NUM_KINDS`)."""
    table = program_vocabulary(problem)
    whole_grid = len(table)
    items = 0 if language is None else len(language)
    if items:
        noop = np.tile(np.asarray(NOOP, np.int32), (items, table.shape[1], 1))
        table = np.concatenate([table, noop])
    demos = problem.num_demos
    slots = bucket(demos, DEMO_SLOTS)
    rows = bucket(len(table), VOCABULARY_SLOTS)
    resized = table[table[..., 0] == ops.RESIZE][:, 3:] + 1  # the largest grid a RESIZE makes
    grids = (*problem.demo_inputs, *problem.demo_outputs)
    largest = max(max(max(g.shape) for g in grids), int(resized.max(initial=1)))
    side = canvas_side(largest)
    demo_table = np.zeros((rows, slots, 5), np.int32)
    demo_table[..., 0] = -1
    demo_table[: len(table), :demos] = table[:, :demos]
    demo_table[: len(table), demos:] = table[:, :1]  # unused slots play the first grid's
    kinds = np.zeros(rows, np.int32)
    kinds[: len(table)] = action_kinds(table)
    inputs, shapes = pad_slots(problem.demo_inputs, slots, side)
    targets, _ = pad_slots(problem.demo_outputs, slots, side)
    demo = np.arange(slots) < demos
    targets[~demo] = -1
    width = language.operations.shape[-1] if items else 0
    mask_ops = np.full((rows, slots, width), -1, np.int32)
    masks = np.zeros((rows, slots, width, side, side), bool)
    if items:
        assert language is not None  # (for the type checker: items > 0)
        kinds[whole_grid : whole_grid + items] = NUM_KINDS + language.kinds
        item_rows = slice(whole_grid, whole_grid + items)
        mask_ops[item_rows, :demos] = language.operations[:, :demos]
        masks[item_rows, :demos] = language.masks[:, :demos, :, :side, :side]
    arrays = TaskArrays(
        *(jnp.asarray(x) for x in (demo_table, np.arange(rows) < len(table), kinds)),
        *(jnp.asarray(x) for x in (inputs, shapes, targets, demo, mask_ops, masks)),
    )
    return arrays, table, side


def learn_program(
    problem: Problem,
    config: ProgramRLConfig,
    key: PRNGKeyArray,
    prior: Float32[Array, "K K"] | None = None,
    variant: LearnerVariant = ADOPTED,
    language: LanguageVocabulary | None = None,
    start_logits: Callable[[TaskArrays, int], Float32[Array, "C C"]] | None = None,
) -> tuple[Learned, Int32[np.ndarray, "C N 5"], int]:
    """Learn ``problem``'s program policy from its demonstrations, starting from the
    ``prior`` over action kinds (a ``"chain"`` policy; a prior over the whole-grid kinds
    alone gives the language's kinds 0, :func:`full_prior`) or, without one, from
    :func:`uniform_logits`: ``(what was learned, the vocabulary, the canvas side)``. With
    ``variant.language``, the vocabulary holds the task's language items too (``language``:
    :func:`~jaxarc.solve.language.vocabulary.language_vocabulary`, made here if ``None``).
    ``start_logits``: the starting logits from the task's arrays and canvas side (a trained
    program network, :func:`jaxarc.solve.program_network.network_start`), in place of a
    prior (a chain policy)."""
    if variant.language and language is None:
        language = language_vocabulary(problem)
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


def greedy_program(
    logits: np.ndarray, config: ProgramRLConfig, variant: LearnerVariant = ADOPTED
) -> Int32[np.ndarray, " T"]:
    """The policy's most likely action at each step (vocabulary rows; a ``"chain"`` policy
    follows its own choices and stops at the first no-op)."""
    if variant.policy == "per-step":
        return np.argmax(logits, axis=-1).astype(np.int32)
    program, previous = [], 0
    for _ in range(config.program_length):
        previous = int(np.argmax(logits[previous]))
        if previous == 0:
            break
        program.append(previous)
    return np.asarray(program, np.int32)


def _played_rows(program: np.ndarray) -> list[int]:
    return [int(k) for k in program if k != 0]


def _replay_program(
    problem: Problem,
    program: np.ndarray,
    table: np.ndarray,
    language: LanguageVocabulary | None,
) -> tuple[bool, list[np.ndarray]]:
    """``program`` (vocabulary rows) replayed by the environment on ``problem``: by
    :func:`~jaxarc.solve.replay.replay_on_task` when it holds whole-grid actions alone,
    else as a mixed program (:func:`~jaxarc.solve.mixed_replay.replay_mixed`)."""
    rows = _played_rows(program)
    whole_grid = len(table) - (0 if language is None else len(language))
    if language is None or all(k < whole_grid for k in rows):
        return replay_on_task(problem, table[rows])
    width = language.operations.shape[-1]
    grids = table.shape[1]
    operations = np.full((len(rows), grids, width), -1, np.int32)
    masks = np.zeros((len(rows), grids, width, *language.masks.shape[-2:]), bool)
    for t, k in enumerate(rows):
        if k >= whole_grid:
            operations[t] = language.operations[k - whole_grid]
            masks[t] = language.masks[k - whole_grid]
    return replay_mixed(problem, table[rows], operations, masks)


def describe_program(
    problem: Problem,
    program: np.ndarray,
    table: np.ndarray,
    language: LanguageVocabulary | None,
) -> list[str]:
    """``program`` (vocabulary rows) in words: whole-grid actions as the search names
    them, language items as their paints."""
    whole_grid = len(table) - (0 if language is None else len(language))
    words: list[str] = []
    for k in _played_rows(program):
        if k < whole_grid:
            words += describe_sequence(table[[k]], problem)
        else:
            assert language is not None  # (for the type checker: a language row)
            words.append(language.describe(k - whole_grid))
    return words


def _ranked_predictions(
    played: list[tuple[bool, list[np.ndarray]]], problem: Problem
) -> tuple[list[list[np.ndarray]], list[bool]]:
    """The test predictions of the played programs (greedy, best, per restart) in the order
    the attempts take them: those of programs that solve every demonstration, the one most
    restarts agree on first (a vote; ties in the order played), then every program's in the
    order played, then the test inputs themselves; and for each, whether its program solves
    every demonstration."""
    solving = [tests for solves, tests in played if solves]

    def votes(tests: list[np.ndarray]) -> int:
        restarts = {
            k // 2
            for k, (solves, other) in enumerate(played)
            if solves and all(np.array_equal(a, b) for a, b in zip(tests, other, strict=True))
        }
        return len(restarts)

    solving = sorted(solving, key=votes, reverse=True)  # (a stable sort)
    options = [*solving, *(tests for _, tests in played), list(problem.test_inputs)]
    flags = [True] * len(solving) + [solves for solves, _ in played] + [False]
    return options, flags


def program_rl_attempts(
    problem: Problem,
    config: ProgramRLConfig,
    key: PRNGKeyArray,
    prior: Float32[Array, "K K"] | None = None,
    variant: LearnerVariant = ADOPTED,
    start_logits: Callable[[TaskArrays, int], Float32[Array, "C C"]] | None = None,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """Two attempts per test input of ``problem`` after learning its program policy (from
    ``prior``, see :func:`learn_program`), and what the learning did (see the module
    docstring)."""
    start = time.perf_counter()
    language = language_vocabulary(problem) if variant.language else None
    runs, played = [], []  # per restart: (learned, greedy, best); per program: (solves, tests)
    for restart in range(variant.restarts):
        run_key = key if restart == 0 else jax.random.fold_in(key, restart)
        learned, table, side = learn_program(
            problem, config, run_key, prior, variant, language, start_logits
        )
        logits = np.asarray(learned.logits)
        greedy = greedy_program(logits, config, variant)
        best = np.asarray(learned.best_program)
        runs.append((learned, greedy, best))
        played += [
            _replay_program(problem, greedy, table, language),
            _replay_program(problem, best, table, language),
        ]
    attempts, from_solutions = pick_attempts(*_ranked_predictions(played, problem))
    top = max(range(len(runs)), key=lambda r: float(runs[r][0].best_reward))  # (first of ties)
    learned, greedy, best = runs[top]
    (greedy_solves, _), (best_solves, _) = played[2 * top], played[2 * top + 1]
    curve, rewards = np.asarray(learned.solved_share), np.asarray(learned.mean_reward)
    info = {
        "vocabulary": int(len(table)),
        "language_items": 0 if language is None else len(language),
        "canvas": side,
        "greedy_program": describe_program(problem, greedy, table, language),
        "greedy_solves_demos": bool(greedy_solves),
        "best_program": describe_program(problem, best, table, language),
        "best_solves_demos": bool(best_solves),
        "first_solved_update": int(learned.first_solved),
        # the last update's group (None without updates)
        "final_mean_reward": round(float(rewards[-1]), 4) if rewards.size else None,
        "final_solved_share": round(float(curve[-1]), 4) if curve.size else None,
        "restarts_solving": sum(
            any(solves for solves, _ in played[2 * r : 2 * r + 2]) for r in range(len(runs))
        ),
        "seconds": round(time.perf_counter() - start, 3),
        "attempts_from_solutions": from_solutions,
    }
    return attempts, info


def solve_with_program_rl(
    problems: list[Problem],
    config: ProgramRLConfig,
    *,
    seed: int = 0,
    prior: Float32[Array, "K K"] | None = None,
    progress: Callable[[int, int], None] | None = None,
    variant: LearnerVariant = ADOPTED,
    start_logits: Callable[[TaskArrays, int], Float32[Array, "C C"]] | None = None,
) -> tuple[dict[str, list[tuple[np.ndarray, np.ndarray]]], dict[str, dict[str, Any]]]:
    """``(attempts by task id, what the learning did by task id)`` for every problem, each
    learned from ``prior`` (see :func:`learn_program`); task ``k`` learns with the key
    ``fold_in(key(seed), k)``. ``variant``: for ablations only."""
    base = jax.random.key(seed)
    attempts, infos = {}, {}
    for k, problem in enumerate(problems):
        if progress is not None:
            progress(k, len(problems))
        attempts[problem.task_id], infos[problem.task_id] = program_rl_attempts(
            problem, config, jax.random.fold_in(base, k), prior, variant, start_logits
        )
    if progress is not None:
        progress(len(problems), len(problems))
    return attempts, infos
