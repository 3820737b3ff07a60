"""What a task's learned program policy answers: its greedy and best programs replayed by
the environment on the task's test inputs, ranked into the two attempts.

After learning (:mod:`jaxarc.solve.program_rl`), the most likely program (the arg-max of
each step's logits) and the best program the learning sampled are replayed by the
environment on the task's 30x30 canvas (:func:`jaxarc.solve.replay.replay_on_task`, or
:func:`jaxarc.solve.mixed_replay.replay_mixed` with language items); those that solve
every demonstration come first, and the first two with different test grids are the two
attempts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jaxtyping import Array, Float32, Int32, PRNGKeyArray

from jaxarc.solve.attempts import describe_sequence, pick_attempts
from jaxarc.solve.language.vocabulary import LanguageVocabulary
from jaxarc.solve.mixed_replay import replay_mixed
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_rl import ProgramRLConfig, learn_program
from jaxarc.solve.program_tasks import StartLogits, task_language
from jaxarc.solve.program_variant import ADOPTED, LearnerVariant
from jaxarc.solve.replay import replay_on_task


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
    start_logits: StartLogits | None = None,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """Two attempts per test input of ``problem`` after learning its program policy (from
    ``prior``, see :func:`learn_program`), and what the learning did (see the module
    docstring)."""
    start = time.perf_counter()
    language = task_language(problem) if variant.language else None
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
    start_logits: StartLogits | None = None,
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
