"""Throughput of the faces users step: the gymnax face next to the core, and ``make_vec``.

Rows, all measured in one run so that ratios between them are meaningful:

* ``core``: :func:`~jaxarc.envs.functional.batch_step` in ``lax.scan`` on episodes kept in
  play, actions from the benchmark's two-random-words sampler (over the allowed operations,
  as the action space samples). The core does not reset, and a finished episode's step is a
  no-op, so each step first clears ``terminated``/``truncated``/``step_count``: every step
  of every environment is an episode step, as it is through the gymnax face, which resets
  finished episodes (without this, episodes of 8 steps in a 20-step scan made 12 of the 20
  core steps no-ops);
* ``gymnax``: ``jax.vmap(env.step)`` in ``lax.scan`` (auto-reset included), same sampler;
* ``gymnax+sample``: the same with actions from ``jax.vmap(env.action_space(params).sample)``,
  what a purejaxrl-style loop does;
* ``gymnax+sample, split_key``: the same loop with its keys split by
  :func:`jaxarc.envs.split_key` instead of ``jax.random.split`` (the same keys; on CPU
  without threefry's loop, which costs the loop ~0.15 ms per step at B=4096);
* ``core loop``: a Python loop of jitted ``batch_step`` calls (outputs left on device), with
  the default observations and with ``episode_context="at_reset"``;
* ``make_vec``: the Gymnasium vector env (what ``gymnasium.make_vec(id, num_envs=B)``
  builds) stepped from Python with NumPy actions (observations and infos fetched to the
  host every step, as a user gets them), both observation options.

Compile time is excluded (a warm-up call first); every timing ends with
``block_until_ready`` (or a host transfer). Episodes are ``max_episode_steps`` long, so the
auto-reset paths run as often as they would in training.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxarc.benchmarking.env_throughput import random_actions
from jaxarc.benchmarking.machine import device_description
from jaxarc.envs.functional import batch_reset, batch_step
from jaxarc.envs.keys import split_key
from jaxarc.envs.types import ArcState

FACE_EPISODE_STEPS = 8
"""The faces table's episode length unless told otherwise: short, so that the auto-reset
runs as often as it does in training (``jaxarc bench env --max-episode-steps``)."""

SPLIT_KEY_FACE = "gymnax+sample, split_key"
"""The row of the purejaxrl-style loop that splits its keys with :func:`split_key`."""

SCAN_FACES = ("core", "gymnax", "gymnax+sample", SPLIT_KEY_FACE)
"""The rows :func:`face_scan_body` builds (all measured by :func:`measure_gymnax`)."""


@dataclasses.dataclass(frozen=True)
class FaceRow:
    env_name: str
    face: str
    batch_size: int
    steps_per_s: float
    compile_s: float


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for k in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(k))
        best = min(best, time.perf_counter() - start)
    return best


def in_play(states: ArcState) -> ArcState:
    """``states`` with their episodes in play again (not terminated or truncated, step 0)."""
    fields = lambda s: (s.terminated, s.truncated, s.step_count)  # noqa: E731
    return eqx.tree_at(fields, states, tuple(jnp.zeros_like(x) for x in fields(states)))


def face_scan_body(face: str, env, params, batch_size: int, mask_pool):
    """The ``lax.scan`` body ``(states, key) -> (states, rewards)`` of one face's row:
    ``"core"`` (:func:`batch_step` on episodes kept in play), ``"gymnax"`` or
    ``"gymnax+sample"`` (``jax.vmap(env.step)`` with auto-reset); actions from the
    benchmark's two-random-words sampler, or from the action space for ``gymnax+sample``.
    :data:`SPLIT_KEY_FACE` is ``gymnax+sample`` whose loop splits its keys with
    :func:`split_key` (the same keys as ``jax.random.split``)."""
    config = env.config
    if face == "core":

        def core_body(states, key):
            actions = random_actions(key, batch_size, config, mask_pool)
            states, _, reward, _, _ = batch_step(in_play(states), actions, config)
            return states, reward

        return core_body
    if face not in SCAN_FACES:
        raise ValueError(f"unknown face row {face!r}")
    space = env.action_space(params)
    split = split_key if face == SPLIT_KEY_FACE else jax.random.split

    def gymnax_body(states, key):
        act_key, step_key = split(key)
        if face == "gymnax":
            actions = random_actions(act_key, batch_size, config, mask_pool)
        else:
            actions = jax.vmap(space.sample)(split(act_key, batch_size))
        step = jax.vmap(env.step, (0, 0, 0, None))
        _, states, reward, _, _, _ = step(split(step_key, batch_size), states, actions, params)
        return states, reward

    return gymnax_body


def measure_gymnax(
    env_name: str,
    batch_size: int,
    faces: tuple[str, ...] = SCAN_FACES,
    scan_steps: int = 50,
    repeats: int = 3,
    max_episode_steps: int = FACE_EPISODE_STEPS,
    **options,
) -> list[FaceRow]:
    """``core`` / ``gymnax`` / ``gymnax+sample`` / :data:`SPLIT_KEY_FACE` rows for one
    environment and batch size (the best of ``repeats`` timed runs each, the rows' runs
    interleaved)."""
    from jaxarc.gymnax.registry import make

    env, params = make(env_name, max_episode_steps=max_episode_steps, **options)
    config, source = env.config, env.task_source
    mask_pool = jax.random.bernoulli(jax.random.key(7), 0.3, (64, *config.dataset.canvas_shape))
    keys = jax.random.split(jax.random.key(0), batch_size)
    runs, compile_s = {}, {}
    for face in faces:
        start = time.perf_counter()
        if face == "core":
            states, _ = jax.block_until_ready(batch_reset(keys, config, source))
        else:
            _, states = jax.block_until_ready(jax.vmap(env.reset, (0, None))(keys, params))
        body = face_scan_body(face, env, params, batch_size, mask_pool)

        @jax.jit
        def rollout(states, key, body=body):
            states, rewards = jax.lax.scan(body, states, jax.random.split(key, scan_steps))
            return states.step_count, rewards.sum()

        jax.block_until_ready(rollout(states, jax.random.key(1)))
        compile_s[face] = time.perf_counter() - start
        runs[face] = lambda k, r=rollout, s=states: r(s, jax.random.key(2 + k))
    # The rows' repeats are interleaved (core, gymnax, ..., core, gymnax, ...), so that a
    # change in the machine's load during the run affects every row alike: the table's
    # point is the ratio between rows.
    best = dict.fromkeys(faces, float("inf"))
    for k in range(repeats):
        for face in faces:
            start = time.perf_counter()
            jax.block_until_ready(runs[face](k))
            best[face] = min(best[face], time.perf_counter() - start)
    return [
        FaceRow(env_name, face, batch_size, batch_size * scan_steps / best[face], compile_s[face])
        for face in faces
    ]


def measure_make_vec(
    env_name: str,
    batch_size: int,
    steps: int = 20,
    repeats: int = 2,
    max_episode_steps: int = FACE_EPISODE_STEPS,
    label: str = "make_vec",
    **options,
) -> FaceRow:
    """The Gymnasium vector env (what ``gymnasium.make_vec(id, num_envs=B)`` builds) stepped
    from Python with NumPy actions; observations and infos reach the host every step."""
    from jaxarc.gym.vector import ArcGymnasiumVectorEnv

    start = time.perf_counter()
    venv = ArcGymnasiumVectorEnv(
        env_name, num_envs=batch_size, max_episode_steps=max_episode_steps, **options
    )
    venv.reset(seed=0)
    venv.action_space.seed(0)
    actions = [venv.action_space.sample() for _ in range(4)]
    for t in range(max_episode_steps + 2):  # every autoreset path compiled
        venv.step(actions[t % len(actions)])
    compile_s = time.perf_counter() - start

    def run(_):
        out = None
        for t in range(steps):
            out = venv.step(actions[t % len(actions)])
        return out[1]

    best = _best_of(run, repeats)
    venv.close()
    return FaceRow(env_name, label, batch_size, batch_size * steps / best, compile_s)


def measure_core_loop(
    env_name: str,
    batch_size: int,
    steps: int = 20,
    repeats: int = 2,
    max_episode_steps: int = FACE_EPISODE_STEPS,
    label: str = "core loop",
    **options,
) -> FaceRow:
    """A Python loop of jitted ``batch_step`` calls (no resets), outputs left on device."""
    from jaxarc.gymnax.registry import make

    env, params = make(env_name, max_episode_steps=max_episode_steps, **options)
    config, source = env.config, env.task_source
    mask_pool = jax.random.bernoulli(jax.random.key(7), 0.3, (64, *config.dataset.canvas_shape))
    start = time.perf_counter()
    states, _ = batch_reset(jax.random.split(jax.random.key(0), batch_size), config, source)
    sample = jax.jit(lambda key: random_actions(key, batch_size, config, mask_pool))
    actions = [sample(jax.random.key(100 + t)) for t in range(steps)]
    jax.block_until_ready((actions, batch_step(states, actions[0], config)))
    compile_s = time.perf_counter() - start

    def run(_):
        loop_states, out = states, None
        for action in actions:
            loop_states, *out = batch_step(loop_states, action, config)
        return loop_states, out

    best = _best_of(run, repeats)
    return FaceRow(env_name, label, batch_size, batch_size * steps / best, compile_s)


def run_faces(
    env_names: tuple[str, ...] = ("ARC-AGI-1", "gen/easy"),
    batch_sizes: tuple[int, ...] = (1024, 4096),
    scan_steps: int = 50,
    loop_steps: int = 20,
    repeats: int = 3,
    max_episode_steps: int = FACE_EPISODE_STEPS,
    echo=print,
) -> list[FaceRow]:
    """Every face row for every environment and batch size (point actions), one run."""
    rows: list[FaceRow] = []
    for name in env_names:
        for batch in batch_sizes:
            new = measure_gymnax(
                name,
                batch,
                scan_steps=scan_steps,
                repeats=repeats,
                max_episode_steps=max_episode_steps,
            )
            loops = dict(steps=loop_steps, repeats=repeats, max_episode_steps=max_episode_steps)
            new.append(measure_core_loop(name, batch, **loops))
            new.append(
                measure_core_loop(
                    name,
                    batch,
                    label="core loop, context at reset",
                    episode_context="at_reset",
                    **loops,
                )
            )
            new.append(measure_make_vec(name, batch, **loops))
            new.append(
                measure_make_vec(
                    name,
                    batch,
                    label="make_vec, context at reset",
                    episode_context="at_reset",
                    **loops,
                )
            )
            for row in new:
                echo(
                    f"{name:10s} {row.face:28s} batch {batch:6d}: {row.steps_per_s:12,.0f} steps/s"
                )
            rows += new
    return rows


def format_table(rows: list[FaceRow]) -> str:
    """Rows with their ratio to the same environment's core (scan) row and to the first
    environment's row of the same face and batch (generated vs bank)."""
    core = {(r.env_name, r.batch_size): r.steps_per_s for r in rows if r.face == "core"}
    first = rows[0].env_name if rows else ""
    bank = {(r.face, r.batch_size): r.steps_per_s for r in rows if r.env_name == first}
    lines = [
        f"| environment | face | batch | steps/s | x core | x {first} | compile (s) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        base = core.get((row.env_name, row.batch_size))
        ratio = "-" if base is None else f"{row.steps_per_s / base:.2f}"
        other = bank.get((row.face, row.batch_size))
        versus = "-" if other is None else f"{row.steps_per_s / other:.2f}"
        lines.append(
            f"| {row.env_name} | {row.face} | {row.batch_size} | {row.steps_per_s:,.0f} "
            f"| {ratio} | {versus} | {row.compile_s:.2f} |"
        )
    return "\n".join(lines)


def faces_stem(backend: str, max_episode_steps: int) -> str:
    """The results files' name: ``faces_<backend>``, with ``_episodes<N>`` unless the
    episodes are :data:`FACE_EPISODE_STEPS` long (so runs of both lengths can be kept)."""
    suffix = "" if max_episode_steps == FACE_EPISODE_STEPS else f"_episodes{max_episode_steps}"
    return f"faces_{backend}{suffix}"


def save_faces(results_dir: Path | None = None, echo=print, **kwargs) -> list[FaceRow]:
    """:func:`run_faces`, then print the table and save it (:func:`faces_stem` ``.md`` and
    ``.json``)."""
    rows = run_faces(echo=echo, **kwargs)
    episode_steps = kwargs.get("max_episode_steps", FACE_EPISODE_STEPS)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    header = (
        f"Faces throughput (point actions, episodes of "
        f"{episode_steps} steps): "
        f"{device_description()}, {os.cpu_count()} CPUs, "
        f"{platform.processor() or platform.machine()}, jax {jax.__version__}, "
        f"load average {' '.join(f'{x:.2f}' if isinstance(x, float) else x for x in load)}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    table = format_table(rows)
    echo("\n" + header + "\n\n" + table)
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        stem = faces_stem(jax.default_backend(), episode_steps)
        (results_dir / f"{stem}.md").write_text(header + "\n\n" + table + "\n")
        (results_dir / f"{stem}.json").write_text(
            json.dumps({"header": header, "rows": [dataclasses.asdict(r) for r in rows]}, indent=1)
        )
    return rows
