"""Held-out success on generated tasks, overall and per family, at any canvas size.

A mixture such as ``gen/medium`` draws a family per task; a single success rate hides which
families a policy solves. :func:`make_family_evaluator` plays fresh episodes (eval mode: the
test pair, all demonstration pairs shown) from a copy of the source made with
``family_as_index=True``, so each episode's ``ArcState.task_index`` holds its family (the
observation never does), and splits the success rate by family inside the compiled
function. The same function evaluates at canvas sizes never seen in training
(``canvas=12, min_side=10``: grids of 10 to 12 cells a side) for policies that read any
canvas (convolutional ones; see :meth:`~jaxarc.agents.model.policy.AbstractPolicy.with_canvas`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int32, PRNGKeyArray

from jaxarc.agents.grpo.rollout import final_states
from jaxarc.agents.model.compilation import policy_jit
from jaxarc.data.generators import GeneratorSource, generator_families, make_generator

FAMILY_METRIC_PREFIX = "eval_success/"  # metrics-log keys: eval_success/<family>


def family_source(name: str, canvas: int, min_side: int = 0) -> GeneratorSource:
    """The ``gen/...`` source ``name`` on a ``canvas`` x ``canvas`` canvas, reporting each
    episode's family as its task index."""
    return make_generator(name, canvas=(canvas, canvas), min_side=min_side, family_as_index=True)


def success_by_family(
    success: Bool[Array, " N"], family: Int32[Array, " N"], num_families: int
) -> tuple[Float32[Array, " F"], Int32[Array, " F"]]:
    """Success rate and episode count of each family (``NaN`` rate for an absent family)."""
    counts = jax.ops.segment_sum(jnp.ones_like(family), family, num_segments=num_families)
    solved = jax.ops.segment_sum(success.astype(jnp.int32), family, num_segments=num_families)
    rates = jnp.where(counts > 0, solved / jnp.maximum(counts, 1), jnp.nan)
    return rates.astype(jnp.float32), counts.astype(jnp.int32)


def make_family_evaluator(
    config: Any,
    num_tasks: int | None = None,
    *,
    canvas: int | None = None,
    min_side: int = 0,
    greedy: bool = True,
) -> Callable[[Any, PRNGKeyArray], dict[str, Array]]:
    """A compiled ``(policy, key) -> {"success", "similarity", "family_success" [F],
    "family_count" [F]}`` for the generator ``config.source`` (a ``gen/...`` name), played
    with ``config``'s action format, allowed operations and ``max_episode_steps``.

    ``canvas`` (default ``config.canvas``) and ``min_side`` change the grid sizes; the
    policy is set to read that canvas (its ``with_canvas``).
    """
    side = canvas or config.canvas
    env_config = config.replace(canvas=side).env_config(episode_mode="eval")
    source = family_source(config.source, side, min_side)
    count = num_tasks or config.eval_tasks
    families = len(source.families)

    @policy_jit
    def evaluate(policy, key):
        states = final_states(
            policy, key, env_config, source, count, config.max_episode_steps, greedy=greedy
        )
        rates, counts = success_by_family(states.success, states.task_index, families)
        return {
            "success": jnp.mean(states.success.astype(jnp.float32)),
            "similarity": jnp.mean(states.similarity),
            "family_success": rates,
            "family_count": counts,
        }

    return lambda policy, key: evaluate(policy.with_canvas((side, side)), key)


def family_metrics(result: Mapping[str, Any], families: tuple[str, ...]) -> dict[str, float]:
    """``{"eval_success/<family>": rate}`` (host floats) from a family evaluator's result."""
    rates = jax.device_get(result["family_success"])
    return {
        FAMILY_METRIC_PREFIX + name: float(rate) for name, rate in zip(families, rates, strict=True)
    }


GENERALISATION_SEED_OFFSET = 2_000_003  # generated-task evaluations: keys training never uses


def evaluate_on_generator(
    policy: Any,
    config: Any,
    source: str,
    *,
    canvas: int | None = None,
    min_side: int = 0,
    num_tasks: int = 512,
    seed: int = 0,
) -> dict[str, Any]:
    """Greedy success of ``policy`` on ``num_tasks`` fresh tasks of the generator ``source``
    (played with ``config``'s actions and ``max_episode_steps``), overall and per family: the
    report ``jaxarc eval --source gen/...`` writes."""
    side = canvas or config.canvas
    evaluate = make_family_evaluator(
        config.replace(source=source), num_tasks, canvas=side, min_side=min_side
    )
    result = jax.device_get(evaluate(policy, jax.random.key(GENERALISATION_SEED_OFFSET + seed)))
    families = generator_families(source)
    return {
        "source": source,
        "canvas": [side, side],
        "min_side": min_side,
        "num_tasks": num_tasks,
        "greedy": True,
        "max_episode_steps": int(config.max_episode_steps),
        "solve_rate": float(result["success"]),
        "similarity": float(result["similarity"]),
        "families": {
            name: {"solve_rate": float(rate), "episodes": int(count)}
            for name, rate, count in zip(
                families, result["family_success"], result["family_count"], strict=True
            )
        },
    }
