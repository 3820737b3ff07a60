"""``jaxarc bench train``: the compiled GRPO train step against eager execution, throughput,
and where an iteration's time goes.

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

The ``jaxarc bench`` module (:mod:`jaxarc.cli.bench`) calls :func:`register_train_bench`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jaxarc.cli.bench import positive_int_list


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def add_train_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", choices=("quick", "default"), default="quick")
    parser.add_argument("--batch-tasks", type=_positive_int, default=None, metavar="B")
    parser.add_argument("--group-size", type=_positive_int, default=None, metavar="G")
    parser.add_argument("--max-episode-steps", type=_positive_int, default=None, metavar="T")
    parser.add_argument("--compiled-steps", type=_positive_int, default=20, metavar="N")
    parser.add_argument(
        "--eager-steps",
        type=_non_negative_int,
        default=2,
        metavar="N",
        help="eager (jax.disable_jit) calls timed per step size after a warm-up call; 0 skips "
        "the eager run (its warm-up compiles every primitive: minutes per size on a GPU)",
    )
    parser.add_argument(
        "--step-episodes",
        type=positive_int_list("episode counts"),
        default=(1, 8),
        metavar="N,N",
        help="episode counts at which the step is also timed (the training minibatch always is)",
    )
    parser.add_argument("--updates", type=_positive_int, default=5, metavar="N")
    parser.add_argument(
        "--out",
        "--out-dir",
        dest="out",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write train_step_<preset>[_<backend>].{json,md} into DIR (no backend on cpu)",
    )
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="also write a jax.profiler trace of one update")  # fmt: skip


def register_train_bench(bench_subparsers: argparse._SubParsersAction) -> None:
    parser = bench_subparsers.add_parser(
        "train", help="compiled vs eager GRPO train step, training throughput, env share"
    )
    add_train_bench_arguments(parser)
    parser.set_defaults(func=run_train_bench)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    import jax

    tic = time.perf_counter()
    out = jax.block_until_ready(fn())
    return out, time.perf_counter() - tic


def bench_config(args: argparse.Namespace) -> Any:
    from jaxarc.agents import TrainConfig

    config = TrainConfig.preset(args.preset)
    changes = {
        name: getattr(args, name)
        for name in ("batch_tasks", "group_size", "max_episode_steps")
        if getattr(args, name) is not None
    }
    # the GRPO update is what is measured: no behaviour-cloning stage before it
    return dataclasses.replace(config, bc_updates=0, **changes)


def _make_collect(config: Any) -> Callable[[Any, Any], Any]:
    """Compiled ``(policy, key) -> TrainingBatchJAX``: the trainer's group rollouts (policy +
    environment) and advantages, for the step benchmark and the rollout timing."""
    from jaxarc.agents.grpo.train import collect_batch, load_task_source
    from jaxarc.agents.model.compilation import policy_jit

    source = load_task_source(config)

    @policy_jit
    def collect(policy, key):
        return collect_batch(policy, None, key, config, source)[0]

    return collect


def _env_only_seconds(config: Any, repeats: int) -> tuple[float, float]:
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

    _, first = _timed(lambda: random_episodes(jax.random.key(0)))
    times = [_timed(lambda i=i: random_episodes(jax.random.key(i + 1)))[1] for i in range(repeats)]
    return first, sum(times) / len(times)


def _flops(compiled: Any) -> float:
    """FLOPs of a compiled ``jax.stages.Compiled`` (XLA's cost analysis)."""
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    return float(cost.get("flops", float("nan")))


def step_flops(policy: Any, opt_state: Any, batch: Any, optimizer: Any, grpo: Any) -> float:
    """FLOPs of one surrogate step on ``batch`` (the compiled program, forward + backward +
    optimiser)."""
    import equinox as eqx
    import jax

    from jaxarc.agents import surrogate_step

    params, static = eqx.partition(policy, eqx.is_array)

    def step(params, opt_state, batch):
        policy, opt_state, metrics = surrogate_step(
            eqx.combine(params, static), opt_state, batch, optimizer, grpo
        )
        return eqx.filter(policy, eqx.is_array), opt_state, metrics

    return _flops(jax.jit(step).lower(params, opt_state, batch).compile())


def policy_flops(policy: Any, obs: Any) -> tuple[float, float]:
    """``(encode_task, act)`` FLOPs of ``policy`` on one observation (one environment)."""
    import equinox as eqx
    import jax

    params, static = eqx.partition(policy, eqx.is_array)
    rebuilt = lambda p: eqx.combine(p, static)  # noqa: E731
    task = policy.encode_task(obs)
    encode = jax.jit(lambda p, o: rebuilt(p).encode_task(o)).lower(params, obs).compile()
    act = jax.jit(lambda p, o, t: jax.tree.leaves(rebuilt(p).act(o, t)))
    return _flops(encode), _flops(act.lower(params, obs, task).compile())


def matmul_reference(flops: float, repeats: int = 10) -> dict[str, float]:
    """A float32 ``n x n`` matmul with about ``flops`` FLOPs (``2 n^3``; n in 64..4096):
    ``{"n", "flops", "seconds", "flops_per_second"}``, the best of ``repeats`` calls after a
    compiled warm-up."""
    import jax
    import jax.numpy as jnp

    n = int(min(max(round((flops / 2.0) ** (1.0 / 3.0)), 64), 4096))
    a = jax.random.normal(jax.random.key(0), (n, n), jnp.float32)
    b = jax.random.normal(jax.random.key(1), (n, n), jnp.float32)
    matmul = jax.jit(jnp.matmul)
    jax.block_until_ready(matmul(a, b))
    seconds = min(_timed(lambda: matmul(a, b))[1] for _ in range(repeats))
    return {
        "n": n,
        "flops": 2.0 * n**3,
        "seconds": seconds,
        "flops_per_second": 2.0 * n**3 / seconds,
    }


def flops_measurements(
    policy: Any, opt_state: Any, batch: Any, optimizer: Any, grpo: Any, step_seconds: float
) -> dict[str, Any]:
    """The FLOP figures of the table: the surrogate step's FLOPs on ``batch`` (a training
    minibatch, ``[N, T]``) and its achieved FLOP/s given its measured ``step_seconds``, a
    same-run matmul of about the same FLOPs, and the policy's FLOPs per environment step."""
    import jax

    flops = step_flops(policy, opt_state, batch, optimizer, grpo)
    achieved = flops / step_seconds
    matmul = matmul_reference(flops)
    steps = batch.valid.shape[1]
    encode, act = policy_flops(policy, jax.tree.map(lambda x: x[0, 0], batch.obs))
    return {
        "step_flops": flops,
        "step_flops_per_second": achieved,
        "matmul": matmul,
        "step_vs_matmul": achieved / matmul["flops_per_second"],
        "policy_encode_task_flops": encode,
        "policy_act_flops": act,
        "policy_flops_per_env_step": encode / steps + act,
    }


def flops_rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    """The table rows of :func:`flops_measurements`' figures."""
    r, m = results, results["matmul"]
    steps = r["config"]["max_episode_steps"]
    return [
        ("surrogate step FLOPs (XLA cost analysis)", f"{r['step_flops'] / 1e9:.2f} GFLOP"),
        ("surrogate step achieved FLOP/s", f"{r['step_flops_per_second'] / 1e9:.1f} GFLOP/s"),
        (
            "same-run float32 matmul (practical peak)",
            f"{m['n']}x{m['n']}: {m['flops_per_second'] / 1e9:.1f} GFLOP/s",
        ),
        ("surrogate step / matmul FLOP/s", f"{r['step_vs_matmul']:.1%}"),
        (
            "policy FLOPs per env step (encode_task / T + act)",
            f"{r['policy_flops_per_env_step'] / 1e6:.2f} MFLOP "
            f"({r['policy_encode_task_flops'] / 1e6:.1f} / {steps} "
            f"+ {r['policy_act_flops'] / 1e6:.2f})",
        ),
    ]


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
    from jaxarc.benchmarking.machine import device_description

    episodes = config.batch_tasks * config.group_size
    steps_per_update = episodes * config.max_episode_steps
    source = load_task_source(config)
    policy = make_policy(jax.random.key(0), config.policy, config.env_config(), source.max_demos)
    optimizer = make_optimizer(config)
    opt_state = optimizer.init(eqx.filter(policy, eqx.is_inexact_array))
    log("rollouts (policy + environment) ...")
    collect = _make_collect(config)
    full_batch, rollout_first_s = _timed(lambda: collect(policy, jax.random.key(1)))
    rollout_s = sum(_timed(lambda: collect(policy, jax.random.key(2)))[1] for _ in range(updates))
    rollout_s /= updates
    copy = lambda tree: jax.tree.map(lambda x: x.copy() if eqx.is_array(x) else x, tree)

    minibatch = episodes // config.grpo.minibatches
    step_rows = []
    for size in sorted({*step_episodes, minibatch} & set(range(1, minibatch + 1))):
        log(f"surrogate step on {size} episodes: compiled, then eager (jax.disable_jit) ...")
        batch = full_batch.take(jnp.arange(size))
        step = create_jax_surrogate_train_step(policy, optimizer, config.grpo)
        first_call = lambda step=step, batch=batch: step(copy(policy), copy(opt_state), copy(batch))
        (p, o, _), compile_s = _timed(first_call)
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
                _, eager_first_s = _timed(eager)  # warm-up: per-op kernels compile here
                eager_s = sum(_timed(eager)[1] for _ in range(eager_steps)) / eager_steps
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
    (state, _), update_first_s = _timed(lambda: update(state))
    update_times = []
    for index in range(updates):
        profiling = profile_dir is not None and index == updates - 1
        if profiling:
            jax.profiler.start_trace(str(profile_dir))
        (state, _), seconds = _timed(lambda state=state: update(state))
        if profiling:
            jax.profiler.stop_trace()
        update_times.append(seconds)
    update_s = sum(update_times) / len(update_times)

    log("environment alone (random actions) ...")
    env_first_s, env_s = _env_only_seconds(config, repeats=updates)
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
        "processor_count": _cpu_count(),
        "load_average_1min_after": os.getloadavg()[0],
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def format_table(results: dict[str, Any]) -> str:
    """The results as a markdown table."""
    c = results["config"]
    shape = f"B={c['batch_tasks']} G={c['group_size']} T={c['max_episode_steps']}"
    r = results
    rows = [
        ("config", f"{shape}, {c['selection_format']}, minibatch {c['minibatch_episodes']} eps"),
        ("train step, first call (trace + compile)", f"{r['step_compile_seconds']:.2f} s"),
    ]
    for row in r["step_by_minibatch"]:
        compiled = f"{row['compiled_seconds'] * 1e3:.2f} ms"
        eager = (
            "not run"
            if math.isnan(row["eager_seconds"])
            else f"{row['eager_seconds'] * 1e3:.0f} ms = {row['speedup']:.0f}x"
        )
        rows.append(
            (f"train step on {row['episodes']} episodes: compiled / eager", f"{compiled} / {eager}")
        )
    rows += flops_rows(r)
    rows += [
        ("update (rollouts + all steps), first call", f"{r['update_first_call_seconds']:.1f} s"),
        ("update, sustained", f"{r['update_seconds'] * 1e3:.1f} ms"),
        ("training throughput", f"{r['env_steps_per_second']:,.0f} env steps/s"),
        ("rollouts (policy + environment) share", f"{r['rollout_share']:.1%}"),
        ("surrogate steps share", f"{r['steps_share']:.1%}"),
        ("environment alone, same steps", f"{r['env_only_seconds'] * 1e3:.1f} ms"),
        ("environment share of an update", f"{r['env_share']:.1%}"),
        ("load average (1 min) after the run", f"{r['load_average_1min_after']:.1f}"),
        ("devices", r["device_description"]),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"| {'measurement'.ljust(width)} | value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {name.ljust(width)} | {value} |" for name, value in rows]
    return "\n".join(lines)


def run_train_bench(args: argparse.Namespace) -> int:
    config = bench_config(args)
    results = run_train_benchmark(
        config,
        compiled_steps=args.compiled_steps,
        eager_steps=args.eager_steps,
        step_episodes=args.step_episodes,
        updates=args.updates,
        profile_dir=args.profile,
    )
    table = format_table(results)
    print(table)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        import jax

        backend = jax.default_backend()  # a GPU run writes beside the CPU table, not over it
        stem = f"train_step_{args.preset}" + ("" if backend == "cpu" else f"_{backend}")
        (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2))
        (args.out / f"{stem}.md").write_text(table + "\n")
        print(f"results: {args.out / stem}.json / .md")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="surrogate_step", description=__doc__.split("\n")[0])
    add_train_bench_arguments(parser)
    return run_train_bench(parser.parse_args(argv))
