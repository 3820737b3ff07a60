"""A prior over programs, learned by reward on many tasks, for the per-task program policy
of :mod:`jaxarc.solve.program_rl` to start from.

A task's vocabulary has its own concrete actions, so what carries from task to task is the
**kind** of an action (:func:`~jaxarc.solve.program_tasks.action_kinds`: its operation and the
class of its box). The prior is one logit per pair of kinds, ``[K, K]``: how likely an
action of one kind follows one of another (the no-op's row starts a program, its column
stops it). On a task, the chain policy's starting logits are the prior at the vocabulary's
kinds, ``prior[kind[a], kind[b]]``.

Pretraining runs in rounds over a set of tasks. Each round learns every task exactly as
``jaxarc solve --method program-rl`` does, from the prior so far (the first round from the
uniform start), keeps the programs among the greedy and the best sampled one that solve
the task's demonstrations (checked by the environment's replay), and fits the prior to
every program kept so far: their log-likelihood under the chain policy, pulled towards the
initial prior. The programs are the learner's own, found by reward: no expert, no search,
and a task's test inputs and outputs play no part.

A prior is kept in a run directory with every learner setting it was made with
(:mod:`jaxarc.solve.prior_store`); ``jaxarc solve --prior DIR`` learns each task from it,
with the learner settings it records (:meth:`PriorConfig.from_record`).
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
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray

from jaxarc.solve.problem import Problem
from jaxarc.solve.program_attempts import greedy_program
from jaxarc.solve.program_rl import ProgramRLConfig, ProgramRLError, learn_program
from jaxarc.solve.program_tasks import NUM_KINDS, TaskArrays, task_arrays
from jaxarc.solve.program_variant import ADOPTED
from jaxarc.solve.replay import replay_on_task

TYPICAL_VOCABULARY = 40  # actions of a task's vocabulary, for the no-op's starting logit


class PriorError(ValueError):
    """A prior directory that cannot be read (with what and where)."""


@dataclasses.dataclass(frozen=True)
class PriorConfig:
    """How the prior learns: ``rounds`` passes over the pretraining tasks, each learning
    every task with the program settings ``program`` from the prior so far, then
    ``fit_steps`` Adam steps at ``learning_rate`` that fit the prior to the programs found,
    pulled towards the initial prior with weight ``anchor``."""

    rounds: int = 1
    fit_steps: int = 300
    learning_rate: float = 0.05
    anchor: float = 0.1
    program: ProgramRLConfig = ProgramRLConfig()

    def __post_init__(self) -> None:
        for name in ("rounds", "fit_steps"):
            if getattr(self, name) < 1:
                raise ProgramRLError(f"PriorConfig.{name}={getattr(self, name)}: at least 1")
        if self.learning_rate <= 0 or self.anchor < 0:
            raise ProgramRLError(
                f"PriorConfig: learning_rate={self.learning_rate} must be more than 0, "
                f"anchor={self.anchor} at least 0"
            )

    def record(self) -> dict[str, Any]:
        """Every setting, the learner's design included (JSON types), as ``prior.json``
        keeps it."""
        settings = dataclasses.asdict(self)
        settings["program"].update(dataclasses.asdict(ADOPTED))
        return settings

    @classmethod
    def from_record(cls, settings: dict[str, Any], where: str) -> PriorConfig:
        """The settings :meth:`record` wrote; a :class:`PriorError` naming ``where`` when one
        is missing (a prior made by an older learner would silently take today's
        defaults), unknown, or of a design ``jaxarc solve`` does not learn with."""
        settings = dict(settings)
        program = dict(settings.pop("program", {}))
        if program:  # a prior made before the language switch learned without the language
            program.setdefault("language", False)
        design = dataclasses.asdict(ADOPTED)
        learner_fields = [f.name for f in dataclasses.fields(ProgramRLConfig)]
        own_fields = [f.name for f in dataclasses.fields(cls) if f.name != "program"]
        missing = [n for n in (*learner_fields, *design) if n not in program]
        missing += [n for n in own_fields if n not in settings]
        if missing:
            raise PriorError(
                f"{where}: records no setting {', '.join(missing)} (made by an older "
                "learner); make the prior again with jaxarc pretrain-programs"
            )
        unknown = sorted(set(program) - set(learner_fields) - set(design))
        unknown += sorted(set(settings) - set(own_fields))
        if unknown:
            raise PriorError(f"{where}: unknown settings {', '.join(unknown)}")
        for name, adopted in design.items():
            if program[name] != adopted:
                raise PriorError(
                    f"{where}: made with the experimental learner setting "
                    f"{name}={program[name]!r} (jaxarc solve learns with {adopted!r})"
                )
        try:
            learner = ProgramRLConfig(**{n: program[n] for n in learner_fields})
            return cls(**settings, program=learner)
        except (ProgramRLError, TypeError) as err:
            raise PriorError(f"{where}: {err}") from None


def initial_prior(config: ProgramRLConfig) -> Float32[np.ndarray, "K K"]:
    """Every kind equally likely after every other, the no-op (stop) at about
    ``config.noop_prior`` on a vocabulary of :data:`TYPICAL_VOCABULARY` actions."""
    prior = np.zeros((NUM_KINDS, NUM_KINDS), np.float32)
    odds = config.noop_prior / (1 - config.noop_prior)
    prior[:, 0] = np.log(odds * (TYPICAL_VOCABULARY - 1) + 1e-9)
    return prior


class Examples(eqx.Module):
    """Solved programs to fit the prior to, padded to one vocabulary size: per example the
    task's action kinds and real rows ``[E, C]``, and the program as vocabulary rows with
    its stop, ``[E, T+1]`` (0, the no-op, after the last action; ``-1`` after the stop)."""

    kinds: Int32[Array, "E C"]
    valid: Bool[Array, "E C"]
    programs: Int32[Array, "E T+1"]


def _examples(found: list[tuple[TaskArrays, np.ndarray]], length: int) -> Examples:
    rows = max(int(task.kinds.shape[0]) for task, _ in found)
    kinds = np.zeros((len(found), rows), np.int32)
    valid = np.zeros((len(found), rows), bool)
    programs = np.full((len(found), length + 1), -1, np.int32)
    for e, (task, program) in enumerate(found):
        size = int(task.kinds.shape[0])
        kinds[e, :size], valid[e, :size] = np.asarray(task.kinds), np.asarray(task.valid)
        programs[e, : len(program)] = program
        programs[e, len(program)] = 0
    return Examples(jnp.asarray(kinds), jnp.asarray(valid), jnp.asarray(programs))


@functools.cache
def _fit(steps: int, learning_rate: float, anchor: float):
    """The compiled fit of the prior to examples (static: steps, rate, anchor weight)."""
    optimizer = optax.adam(optax.constant_schedule(learning_rate))

    def log_likelihood(prior, examples: Examples) -> Float32[Array, ""]:
        def one(kinds, valid, program):
            logits = jnp.where(valid[None], prior[kinds[:, None], kinds[None, :]], -jnp.inf)
            previous = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.maximum(program[:-1], 0)])
            log_probs = jax.nn.log_softmax(logits[previous], axis=-1)  # [T+1, C]
            taken = jnp.take_along_axis(log_probs, jnp.maximum(program, 0)[:, None], 1)[:, 0]
            return jnp.sum(jnp.where(program >= 0, taken, 0.0))

        return jnp.mean(jax.vmap(one)(examples.kinds, examples.valid, examples.programs))

    def fit(prior, start, examples: Examples):
        def loss(p):
            return -log_likelihood(p, examples) + anchor * jnp.mean((p - start) ** 2)

        def step(carry, _):
            p, opt_state = carry
            grads = jax.grad(loss)(p)
            with jax.numpy_dtype_promotion("standard"):  # optax mixes int32 counts and floats
                updates, opt_state = optimizer.update(grads, opt_state, p)
            return (optax.apply_updates(p, updates), opt_state), None

        (prior, _), _ = jax.lax.scan(step, (prior, optimizer.init(prior)), None, length=steps)
        return prior, log_likelihood(prior, examples)

    return jax.jit(fit)


def solved_programs(
    problem: Problem, config: ProgramRLConfig, key: PRNGKeyArray, prior: np.ndarray | None
) -> list[np.ndarray]:
    """Learn ``problem`` as at test time (:func:`~jaxarc.solve.program_rl.learn_program`)
    and return the programs (vocabulary rows, no-ops left out) among the
    greedy and the best sampled one that solve every demonstration, checked by the
    environment's replay on the 30x30 canvas."""
    learned, table, _ = learn_program(problem, config, key, prior)
    found: list[np.ndarray] = []
    for program in (greedy_program(np.asarray(learned.logits), config), learned.best_program):
        rows = np.asarray([k for k in np.asarray(program) if k != 0], np.int32)
        fresh = not any(np.array_equal(rows, other) for other in found)
        if rows.size and fresh and replay_on_task(problem, table[rows])[0]:
            found.append(rows)
    return found


@dataclasses.dataclass
class PretrainState:
    """Where a pretraining stands after ``len(history)`` rounds: the prior, one record per
    round, and per task (by its index) the programs that solved its demonstrations so far
    (vocabulary rows)."""

    prior: Float32[np.ndarray, "K K"]
    history: list[dict[str, Any]]
    found: dict[int, list[np.ndarray]]


def train_prior(
    problems: list[Problem],
    config: PriorConfig,
    key: PRNGKeyArray,
    *,
    progress: Callable[[int, int], None] | None = None,
    on_round: Callable[[PretrainState], None] | None = None,
    resume: PretrainState | None = None,
) -> tuple[Float32[np.ndarray, "K K"], list[dict[str, Any]]]:
    """Learn the prior on ``problems`` (their demonstrations only) in ``config.rounds``
    rounds: each round learns every task from the current prior, as at test time, and
    fits the prior to every program that solved a task's demonstrations so far
    (self-imitation of what reward found). ``(prior, one record per round: the tasks solved
    on their demonstrations, the programs' mean log-likelihood after the fit, seconds)``.
    ``on_round(state)`` is called after each round (to keep what is learned); ``resume``
    (a state ``on_round`` was given) goes on after its last round, with the result an
    uninterrupted run gives (round ``r`` draws from ``fold_in(key, r)``)."""
    start_prior = initial_prior(config.program)
    state = resume or PretrainState(start_prior, [], {})
    prior, history = state.prior, list(state.history)
    tasks = {k: task_arrays(problem)[0] for k, problem in enumerate(problems)}
    found = {k: list(state.found.get(k, [])) for k in range(len(problems))}
    total = config.rounds * len(problems)
    for round_index in range(len(history), config.rounds):
        begin = time.perf_counter()
        solved: list[str] = []
        for k, problem in enumerate(problems):
            if progress is not None:
                progress(round_index * len(problems) + k, total)
            task_key = jax.random.fold_in(jax.random.fold_in(key, round_index), k)
            programs = solved_programs(
                problem, config.program, task_key, None if round_index == 0 else prior
            )
            known = found[k]
            known += [p for p in programs if not any(np.array_equal(p, q) for q in known)]
            if programs:
                solved.append(problem.task_id)
        record: dict[str, Any] = {"round": round_index, "tasks_solved": solved}
        examples = [(tasks[k], p) for k, programs in found.items() for p in programs]
        if examples:
            fit = _fit(config.fit_steps, config.learning_rate, config.anchor)
            fitted, likelihood = fit(
                jnp.asarray(start_prior),
                jnp.asarray(start_prior),
                _examples(examples, config.program.program_length),
            )
            prior = np.asarray(fitted)
            record["log_likelihood"] = round(float(likelihood), 4)
            record["programs"] = len(examples)
        record["seconds"] = round(time.perf_counter() - begin, 1)
        history.append(record)
        if on_round is not None:
            on_round(PretrainState(np.asarray(prior, np.float32), list(history), found))
    if progress is not None:
        progress(total, total)
    return np.asarray(prior, np.float32), history
