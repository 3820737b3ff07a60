"""What ``jaxarc bench train`` measures: the compiled GRPO train step against eager execution,
throughput, and where an iteration's time goes.

Measured on the configuration of a preset (flags override its batch shape):

* the surrogate train step (one minibatch gradient step) compiled with ``equinox.filter_jit``
  vs the same function under ``jax.disable_jit()`` (sustained means after a warm-up call):
  the speed-up ratio, and the first compiled call (trace + compile);
* a whole update (``make_train``: rollouts + ``epochs x minibatches`` steps): first call and
  sustained time, environment steps per second;
* the environment alone: the environment work of an update's rollouts (B resets repeated G
  times, T steps of the B*G episodes) with uniformly random actions and no policy, as a
  share of the update's time;
* FLOPs (XLA's cost analysis of the compiled programs): of one surrogate step on the
  training minibatch and its achieved FLOP/s, next to a float32 square matmul of about the
  same FLOPs timed in the same run (the machine's practical peak); and the policy's FLOPs
  per environment step (``encode_task`` once per episode, spread over its T steps, plus
  ``act``).

:func:`run_train_benchmark` runs every measurement and returns the results dict;
:mod:`jaxarc.cli.bench_train` parses the flags and prints the table.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jaxarc.benchmarking.machine import cpu_count, device_description
from jaxarc.benchmarking.timing import timed
from jaxarc.benchmarking.train_flops import flops_measurements


def train_bench_config(
    preset: str,
    *,
    batch_tasks: int | None = None,
    group_size: int | None = None,
    max_episode_steps: int | None = None,
) -> Any:
    """The ``TrainConfig`` measured: ``preset``'s, with the batch shape given (None: the
    preset's) and no behaviour-cloning stage (the GRPO update is what is measured)."""
    from jaxarc.agents import TrainConfig

    config = TrainConfig.preset(preset)
    changes = {
        "batch_tasks": batch_tasks,
        "group_size": group_size,
        "max_episode_steps": max_episode_steps,
    }
    changes = {name: value for name, value in changes.items() if value is not None}
    return dataclasses.replace(config, bc_updates=0, **changes)


def make_collect(config: Any) -> Callable[[Any, Any], Any]:
    """Compiled ``(policy, key) -> TrainingBatchJAX``: the trainer's group rollouts (policy +
    environment) and advantages, for the step benchmark and the rollout timing."""
    from jaxarc.agents.grpo.train import collect_batch, load_task_source
    from jaxarc.agents.model.compilation import policy_jit

    source = load_task_source(config)

    @policy_jit
    def collect(policy, key):
        return collect_batch(policy, None, key, config, source)[0]

    return collect


def env_only_seconds(config: Any, repeats: int) -> tuple[float, float]:
    """(first call, sustained mean) of the environment work of one update's rollouts, with
    random actions: B resets (one task per group, as ``group_rollout`` does), each state
    repeated G times, then T batched steps of the B*G episodes."""
    import equinox as eqx
    import jax

    from jaxarc.agents.grpo.rollout import repeat_groups
    from jaxarc.agents.grpo.train import load_task_source
    from jaxarc.envs.functional import batch_reset
    from jaxarc.envs.rollout import play
    from jaxarc.gymnax.spaces import StructuredActionSpace

    source = load_task_source(config)
    env_config = config.env_config()
    space = StructuredActionSpace(env_config)
    episodes = config.batch_tasks * config.group_size

    @eqx.filter_jit
    def random_episodes(key):
        reset_key, act_key = jax.random.split(key)
        keys = jax.random.split(reset_key, config.batch_tasks)
        states, obs = batch_reset(keys, env_config, source)
        states, obs = repeat_groups((states, obs), config.group_size)

        def act(states, obs, step_key):
            return jax.vmap(space.sample)(jax.random.split(step_key, episodes)), None

        step_keys = jax.random.split(act_key, config.max_episode_steps)
        return play(states, obs, env_config, act, step_keys)[2].rewards

    _, first = timed(lambda: random_episodes(jax.random.key(0)))
    times = [timed(lambda i=i: random_episodes(jax.random.key(i + 1)))[1] for i in range(repeats)]
    return first, sum(times) / len(times)


def run_train_benchmark(
    config: Any,
    *,
    compiled_steps: int = 20,
    eager_steps: int = 2,
    step_episodes: tuple[int, ...] = (1, 8),
    updates: int = 5,
    profile_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run every measurement for ``config``; returns the results dict (seconds, ratios).

    The step is timed on the training minibatch and on each of ``step_episodes`` below it;
    ``eager_steps=0`` skips the eager run (its ratio is then NaN)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    from jaxarc.agents import (
        create_jax_surrogate_train_step,
        make_optimizer,
        make_policy,
        make_train,
        surrogate_step,
    )
    from jaxarc.agents.grpo.train import load_task_source
    from jaxarc.agents.run.distributed import make_data_mesh

    episodes = config.batch_tasks * config.group_size
    steps_per_update = episodes * config.max_episode_steps
    source = load_task_source(config)
    policy = make_policy(jax.random.key(0), config.policy, config.env_config(), source.max_demos)
    optimizer = make_optimizer(config)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    log("rollouts (policy + environment) ...")
    collect = make_collect(config)
    full_batch, rollout_first_s = timed(lambda: collect(policy, jax.random.key(1)))
    rollout_s = sum(timed(lambda: collect(policy, jax.random.key(2)))[1] for _ in range(updates))
    rollout_s /= updates
    copy = lambda tree: jax.tree.map(lambda x: x.copy() if eqx.is_array(x) else x, tree)

    minibatch = episodes // config.grpo.minibatches
    step_rows = []
    for size in sorted({*step_episodes, minibatch} & set(range(1, minibatch + 1))):
        log(f"surrogate step on {size} episodes: compiled, then eager (jax.disable_jit) ...")
        batch = full_batch.take(jnp.arange(size))
        step = create_jax_surrogate_train_step(policy, optimizer, config.grpo)
        first_call = lambda step=step, batch=batch: step(copy(policy), copy(opt_state), copy(batch))
        (p, o, _), compile_s = timed(first_call)
        inputs = [copy(batch) for _ in range(compiled_steps)]  # donated: one copy per call
        tic = time.perf_counter()
        for part in inputs:
            p, o, metrics = step(p, o, part)
        jax.block_until_ready(metrics)
        compiled_s = (time.perf_counter() - tic) / compiled_steps
        eager_first_s = eager_s = float("nan")
        if eager_steps > 0:
            with jax.disable_jit():
                eager = lambda batch=batch: surrogate_step(
                    policy, opt_state, batch, optimizer, config.grpo
                )
                _, eager_first_s = timed(eager)  # warm-up: per-op kernels compile here
                eager_s = sum(timed(eager)[1] for _ in range(eager_steps)) / eager_steps
        step_rows.append(
            {
                "episodes": size,
                "compile_seconds": compile_s,
                "compiled_seconds": compiled_s,
                "eager_first_seconds": eager_first_s,
                "eager_seconds": eager_s,
                "speedup": eager_s / compiled_s,
            }
        )
    training_step = step_rows[-1]
    log("FLOPs (XLA cost analysis) and a same-run matmul ...")
    flops = flops_measurements(
        policy,
        opt_state,
        full_batch.take(jnp.arange(minibatch)),
        optimizer,
        config.grpo,
        training_step["compiled_seconds"],
    )

    log("whole update (make_train) ...")
    init, update = make_train(config, make_data_mesh())
    state = init(jax.random.key(config.seed))
    (state, _), update_first_s = timed(lambda: update(state))
    update_times = []
    for index in range(updates):
        profiling = profile_dir is not None and index == updates - 1
        if profiling:
            jax.profiler.start_trace(str(profile_dir))
        (state, _), seconds = timed(lambda state=state: update(state))
        if profiling:
            jax.profiler.stop_trace()
        update_times.append(seconds)
    update_s = sum(update_times) / len(update_times)

    log("environment alone (random actions) ...")
    env_first_s, env_s = env_only_seconds(config, repeats=updates)
    return {
        "config": {
            "preset_source": config.source,
            "selection_format": config.selection_format,
            "batch_tasks": config.batch_tasks,
            "group_size": config.group_size,
            "max_episode_steps": config.max_episode_steps,
            "epochs": config.grpo.epochs,
            "minibatches": config.grpo.minibatches,
            "minibatch_episodes": episodes // config.grpo.minibatches,
        },
        "step_compile_seconds": training_step["compile_seconds"],
        "step_compiled_seconds": training_step["compiled_seconds"],
        "step_eager_seconds": training_step["eager_seconds"],
        "step_speedup": training_step["speedup"],
        "step_by_minibatch": step_rows,
        **flops,
        "rollout_first_call_seconds": rollout_first_s,
        "rollout_seconds": rollout_s,
        "rollout_share": rollout_s / update_s,
        "steps_share": training_step["compiled_seconds"]
        * config.grpo.epochs
        * config.grpo.minibatches
        / update_s,
        "update_first_call_seconds": update_first_s,
        "update_seconds": update_s,
        "env_steps_per_update": steps_per_update,
        "env_steps_per_second": steps_per_update / update_s,
        "env_only_first_call_seconds": env_first_s,
        "env_only_seconds": env_s,
        "env_share": env_s / update_s,
        "devices": [str(d) for d in jax.devices()],
        "device_description": device_description(),
        "jax_version": jax.__version__,
        "machine": platform.machine(),
        "processor_count": cpu_count(),
        "load_average_1min_after": os.getloadavg()[0],
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
