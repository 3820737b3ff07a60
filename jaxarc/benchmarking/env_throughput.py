"""Environment throughput: steps per second of ``batch_step`` under ``lax.scan`` and a loop.

Actions are uniformly random valid actions over all 35 operations, drawn inside the
compiled code from one key per step (two random words per environment; masks from a
pre-drawn pool), so the measurement is dominated by the environment. Compile time (the first
reset plus the first step, including the compile of the jitted sampler of the first actions)
is measured separately and excluded from the throughput; every timing ends with
``block_until_ready``.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, PRNGKeyArray

from jaxarc.benchmarking.machine import device_description
from jaxarc.data import AbstractTaskSource, load_source
from jaxarc.envs import (
    JaxArcConfig,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    batch_reset,
    batch_step,
)
from jaxarc.envs.structured_actions import AbstractAction, BboxAction, MaskAction, PointAction
from jaxarc.grid.operation_ids import NUM_OPERATIONS

MASK_POOL = 64


@dataclasses.dataclass(frozen=True)
class ThroughputRow:
    selection_format: str
    batch_size: int
    scan_steps_per_s: float
    loop_steps_per_s: float | None
    compile_reset_step_s: float
    state_bytes_per_env: int


def random_actions(
    key: PRNGKeyArray, batch: int, config: JaxArcConfig, mask_pool: Bool[Array, "M H W"] | None
) -> AbstractAction:
    """Uniformly random valid actions for ``batch`` environments, from two random words each.

    The operation is uniform over the config's allowed operations (all 35 by default).
    ``mask_pool`` (:data:`MASK_POOL` masks of the canvas) is read for the mask format only.

    Mixed-radix digits of 32-bit words (bias below 1e-4): the first word gives the operation,
    row and column, the second the other bbox corner and the mask-pool entry. One ``bits``
    draw is about five times cheaper than ``randint`` per field, which matters here: the
    sampling runs inside the timed step.
    """
    height, width = config.dataset.canvas_shape
    words = jax.random.bits(key, (2, batch), jnp.uint32)

    def digits(word, radices):
        out = []
        for radix in radices:
            out.append((word % jnp.uint32(radix)).astype(jnp.int32))
            word = word // jnp.uint32(radix)
        return out

    allowed = config.action.allowed_ids
    operation, row, col = digits(words[0], (len(allowed), height, width))
    if len(allowed) < NUM_OPERATIONS:  # the allowed operations only, as the action space samples
        operation = jnp.asarray(allowed, jnp.int32)[operation]
    row2, col2, pool_index = digits(words[1], (height, width, MASK_POOL))
    fmt = config.action.selection_format
    if fmt == "point":
        return PointAction(operation, row, col)
    if fmt == "bbox":
        return BboxAction(operation, row, col, row2, col2)
    return MaskAction(operation, mask_pool[pool_index])


def _state_bytes(states, batch: int) -> int:
    return sum(leaf.nbytes for leaf in jax.tree.leaves(states)) // batch


def measure(
    bank: AbstractTaskSource,
    selection_format: str,
    batch_size: int,
    scan_steps: int = 100,
    loop_steps: int = 20,
    repeats: int = 3,
) -> ThroughputRow:
    """One row of the table (best of ``repeats`` timed runs after a warm-up)."""
    config = JaxArcConfig(
        dataset=UnifiedDatasetConfig(*bank.canvas_shape),
        action=UnifiedActionConfig(selection_format=selection_format),
    )
    mask_pool = jax.random.bernoulli(jax.random.key(7), 0.3, (MASK_POOL, *bank.canvas_shape))
    reset_keys = jax.random.split(jax.random.key(0), batch_size)

    sample = jax.jit(lambda key: random_actions(key, batch_size, config, mask_pool))
    start = time.perf_counter()
    states, _ = batch_reset(reset_keys, config, bank)
    first_actions = sample(jax.random.key(1))  # one compile (op by op: a dozen small ones)
    jax.block_until_ready(batch_step(states, first_actions, config))
    compile_s = time.perf_counter() - start  # first reset + first step: tracing and compiling

    @jax.jit
    def scan_rollout(states, key):
        def body(states, step_key):
            actions = random_actions(step_key, batch_size, config, mask_pool)
            states, _, reward, _, _ = batch_step(states, actions, config)
            return states, reward

        states, rewards = jax.lax.scan(body, states, jax.random.split(key, scan_steps))
        return states.step_count, rewards.sum()

    jax.block_until_ready(scan_rollout(states, jax.random.key(2)))  # compile + warm-up
    best = float("inf")
    for k in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(scan_rollout(states, jax.random.key(3 + k)))
        best = min(best, time.perf_counter() - start)
    scan_rate = batch_size * scan_steps / best

    loop_rate = None
    if loop_steps > 0:
        actions = [sample(jax.random.key(100 + t)) for t in range(loop_steps)]
        jax.block_until_ready((actions, batch_step(states, actions[0], config)))
        start = time.perf_counter()
        loop_states = states
        for action in actions:
            loop_states, obs, reward, done, info = batch_step(loop_states, action, config)
        jax.block_until_ready((loop_states, obs, reward))
        loop_rate = batch_size * loop_steps / (time.perf_counter() - start)

    return ThroughputRow(
        selection_format,
        batch_size,
        scan_rate,
        loop_rate,
        compile_s,
        _state_bytes(states, batch_size),
    )


def format_table(rows: list[ThroughputRow]) -> str:
    lines = [
        "| format | batch | steps/s (scan) | steps/s (Python loop) | compile reset+step (s) "
        "| state bytes/env |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        loop = "-" if row.loop_steps_per_s is None else f"{row.loop_steps_per_s:,.0f}"
        lines.append(
            f"| {row.selection_format} | {row.batch_size} | {row.scan_steps_per_s:,.0f} | {loop} "
            f"| {row.compile_reset_step_s:.2f} | {row.state_bytes_per_env:,} |"
        )
    return "\n".join(lines)


def run(
    source: str = "arc-agi-1/training",
    formats: tuple[str, ...] = ("point", "bbox", "mask"),
    batch_sizes: tuple[int, ...] = (1, 64, 1024, 4096, 16384),
    scan_steps: int = 100,
    loop_steps: int = 20,
    repeats: int = 3,
    results_dir: Path | None = None,
    echo=print,
) -> list[ThroughputRow]:
    """Measure every (format, batch) pair, print the table and save it (md + json)."""
    bank = load_source(source)
    rows = []
    for fmt in formats:
        for batch in batch_sizes:
            row = measure(bank, fmt, batch, scan_steps, loop_steps, repeats)
            rows.append(row)
            echo(
                f"{fmt:5s} batch {batch:6d}: {row.scan_steps_per_s:14,.0f} steps/s in scan, "
                f"compile {row.compile_reset_step_s:.2f}s"
            )
    table = format_table(rows)
    header = (
        f"Environment throughput on {source} ({bank.canvas_shape[0]}x{bank.canvas_shape[1]}), "
        f"{scan_steps} steps in lax.scan, best of {repeats}; {device_description()}, "
        f"{platform.processor() or platform.machine()}, "
        f"jax {jax.__version__}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    echo("\n" + header + "\n\n" + table)
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        stem = f"throughput_{jax.default_backend()}"
        (results_dir / f"{stem}.md").write_text(header + "\n\n" + table + "\n")
        (results_dir / f"{stem}.json").write_text(
            json.dumps({"header": header, "rows": [dataclasses.asdict(r) for r in rows]}, indent=1)
        )
    return rows
