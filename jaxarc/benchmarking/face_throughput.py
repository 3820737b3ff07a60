"""Throughput of the faces users step: the gymnax face next to the core, and ``make_vec``.

Rows, all measured in one run so that ratios between them are meaningful:

* ``core``: :func:`~jaxarc.envs.functional.batch_step` in ``lax.scan`` (no resets), actions
  from the benchmark's two-random-words sampler;
* ``gymnax``: ``jax.vmap(env.step)`` in ``lax.scan`` (auto-reset included), same sampler;
* ``gymnax+sample``: the same with actions from ``jax.vmap(env.action_space(params).sample)``,
  what a purejaxrl-style loop does;
* ``make_vec``: ``gymnasium.make_vec(id, num_envs=B)`` stepped from Python with NumPy
  actions (observations and infos fetched to the host every step, as a user gets them).

Compile time is excluded (a warm-up call first); every timing ends with
``block_until_ready`` (or a host transfer). Episodes are ``episode_steps`` long, so the
auto-reset paths run as often as they would in training.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from jaxarc.benchmarking.env_throughput import _random_actions
from jaxarc.envs.functional import batch_reset, batch_step


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


def measure_gymnax(
    env_name: str,
    batch_size: int,
    faces: tuple[str, ...] = ("core", "gymnax", "gymnax+sample"),
    scan_steps: int = 50,
    repeats: int = 3,
    episode_steps: int = 8,
    **options,
) -> list[FaceRow]:
    """``core`` / ``gymnax`` / ``gymnax+sample`` rows for one environment and batch size."""
    from jaxarc.envs.registry import make

    env, params = make(env_name, max_episode_steps=episode_steps, **options)
    config, source = env.config, env.task_source
    space = env.action_space(params)
    mask_pool = jax.random.bernoulli(jax.random.key(7), 0.3, (64, *config.dataset.canvas_shape))
    keys = jax.random.split(jax.random.key(0), batch_size)
    rows = []
    for face in faces:
        if face == "core":
            start = time.perf_counter()
            states, _ = jax.block_until_ready(batch_reset(keys, config, source))

            def body(states, key):
                actions = _random_actions(key, batch_size, config, mask_pool)
                states, _, reward, _, _ = batch_step(states, actions, config)
                return states, reward

        else:
            start = time.perf_counter()
            _, states = jax.block_until_ready(jax.vmap(env.reset, (0, None))(keys, params))
            sampled = face == "gymnax+sample"

            def body(states, key, sampled=sampled):
                act_key, step_key = jax.random.split(key)
                if sampled:
                    actions = jax.vmap(space.sample)(jax.random.split(act_key, batch_size))
                else:
                    actions = _random_actions(act_key, batch_size, config, mask_pool)
                step = jax.vmap(env.step, (0, 0, 0, None))
                _, states, reward, _, _, _ = step(
                    jax.random.split(step_key, batch_size), states, actions, params
                )
                return states, reward

        @jax.jit
        def rollout(states, key, body=body):
            states, rewards = jax.lax.scan(body, states, jax.random.split(key, scan_steps))
            return states.step_count, rewards.sum()

        jax.block_until_ready(rollout(states, jax.random.key(1)))
        compile_s = time.perf_counter() - start
        best = _best_of(lambda k, r=rollout, s=states: r(s, jax.random.key(2 + k)), repeats)
        rows.append(FaceRow(env_name, face, batch_size, batch_size * scan_steps / best, compile_s))
    return rows


def measure_make_vec(
    env_name: str,
    batch_size: int,
    steps: int = 20,
    repeats: int = 2,
    episode_steps: int = 8,
    label: str = "make_vec",
    **options,
) -> FaceRow:
    """``gymnasium.make_vec`` stepped from Python with NumPy actions (host observations)."""
    import gymnasium

    from jaxarc.gym.registration import gymnasium_id, register_gymnasium_envs

    register_gymnasium_envs([env_name])
    start = time.perf_counter()
    venv = gymnasium.make_vec(
        gymnasium_id(env_name), num_envs=batch_size, episode_steps=episode_steps, **options
    )
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [venv.action_space.sample() for _ in range(4)]
    del rng
    venv.step(actions[0])
    venv.step(actions[1])
    compile_s = time.perf_counter() - start

    def run(_):
        out = None
        for t in range(steps):
            out = venv.step(actions[t % len(actions)])
        return out[1]

    run(0)  # every autoreset path compiled
    best = _best_of(run, repeats)
    venv.close()
    return FaceRow(env_name, label, batch_size, batch_size * steps / best, compile_s)


def format_table(rows: list[FaceRow]) -> str:
    core = {(r.env_name, r.batch_size): r.steps_per_s for r in rows if r.face == "core"}
    lines = [
        "| environment | face | batch | steps/s | x core | compile (s) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        base = core.get((row.env_name, row.batch_size))
        ratio = "-" if base is None else f"{row.steps_per_s / base:.2f}"
        lines.append(
            f"| {row.env_name} | {row.face} | {row.batch_size} | {row.steps_per_s:,.0f} "
            f"| {ratio} | {row.compile_s:.2f} |"
        )
    return "\n".join(lines)
