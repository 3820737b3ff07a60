"""Subprocess worker for the sharding and multi-process tests (run as a script).

Trains the tiny configuration of :func:`tiny_config` for a few updates on a ``data`` mesh and
writes the per-update losses and the final policy parameters (one flat vector) to an
``.npz`` file. JAX's device count and distributed runtime are set up before JAX starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

TASKS = {
    "recolour": {
        "train": [
            {"input": [[1, 0], [0, 0]], "output": [[2, 0], [0, 0]]},
            {"input": [[0, 1], [0, 0]], "output": [[0, 2], [0, 0]]},
        ],
        "test": [{"input": [[0, 0], [1, 0]], "output": [[0, 0], [2, 0]]}],
    },
    "drop": {
        "train": [
            {"input": [[3, 3], [0, 0]], "output": [[0, 0], [3, 3]]},
            {"input": [[4, 4], [0, 0]], "output": [[0, 0], [4, 4]]},
        ],
        "test": [{"input": [[5, 5], [0, 0]], "output": [[0, 0], [5, 5]]}],
    },
}


def tiny_policy():  # -> PolicyConfig
    """The tests' tiny policy: narrow layers and no hand-made cell predictor (the tests that
    use it check how runs are driven and sharded, not the policy's parts; a smaller program
    to compile)."""
    from jaxarc.agents import PolicyConfig

    return PolicyConfig(
        channels=4,
        trunk_layers=1,
        pair_channels=4,
        context_size=8,
        head_hidden=8,
        in_context_prediction=False,
    )


def policy_flags(policy) -> list[str]:  # policy: PolicyConfig
    """The ``jaxarc train`` flags that give ``policy``'s sizes and predictor switch (the
    fields :func:`tiny_policy` sets)."""
    flags = []
    for name in ("channels", "trunk_layers", "pair_channels", "context_size", "head_hidden"):
        flags += [f"--policy-{name.replace('_', '-')}", str(getattr(policy, name))]
    no = "" if policy.in_context_prediction else "no-"
    return [*flags, f"--{no}policy-in-context-prediction"]


def tiny_config(tasks_file: Path, batch_tasks: int):  # -> TrainConfig
    from jaxarc.agents import GRPOConfig, TrainConfig

    # Adam divides by the gradient's running RMS, so for a parameter whose gradient is ~0
    # (a sum of cancelling terms) the float noise of a differently ordered reduction changes
    # its step by up to ~lr. Hence a small lr (runs must agree to 1e-5) and "mask"
    # selections: with "point"/"bbox" the selection heads' biases shift every logit of a
    # softmax alike, their exact gradient is 0 and their steps are pure noise of size ~lr.
    return TrainConfig(
        source=str(tasks_file),
        selection_format="mask",
        canvas=30,
        batch_tasks=batch_tasks,
        group_size=2,
        max_episode_steps=2,
        similarity_weight=0.5,  # a graded reward, so groups differ (the env default is 0.0)
        num_updates=3,
        lr=1e-4,
        # two minibatches, each gathering episodes from every device or process (each
        # minibatch's step is another copy of the policy's gradient in the program, so one
        # epoch: multi-epoch updates are tested in one process, test_agents_train.py)
        grpo=GRPOConfig(epochs=1, minibatches=2),
        policy=tiny_policy(),
    )


def tiny_bc_config(batch_tasks: int, updates: int):  # -> TrainConfig
    """A tiny behaviour-cloning run: ``updates`` BC updates (the paint expert on gen/easy,
    point actions) of a small learned in-context policy. A small lr for the reason above."""
    from jaxarc.agents import GRPOConfig, TrainConfig
    from jaxarc.agents.grpo.config import FLOOD_AND_SUBMIT

    return TrainConfig(
        source="gen/easy",
        selection_format="point",
        allowed_operations=FLOOD_AND_SUBMIT,
        batch_tasks=batch_tasks,
        group_size=2,
        max_episode_steps=2,  # a short unrolled expert rollout: a smaller program to compile
        num_updates=updates,
        bc_updates=updates,
        lr=1e-4,
        grpo=GRPOConfig(epochs=1, minibatches=1),
        policy=dataclasses.replace(tiny_policy(), learned_prediction=True),
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks-file", type=Path, required=True, help="written by the test")
    parser.add_argument("--local-devices", type=int, default=1)
    parser.add_argument("--mesh-sizes", type=int, nargs="+", default=[1])
    parser.add_argument("--batch-tasks", type=int, default=4)
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--bc", action="store_true", help="behaviour-cloning updates only")
    parser.add_argument("--coordinator-address", default=None)
    parser.add_argument("--num-processes", type=int, default=None)
    parser.add_argument("--process-id", type=int, default=None)
    args = parser.parse_args(argv)

    import jax

    jax.config.update("jax_num_cpu_devices", args.local_devices)
    from jaxarc.agents.run.distributed import (
        DistributedConfig,
        initialize_distributed,
        is_primary_process,
        make_data_mesh,
    )

    initialize_distributed(
        DistributedConfig(args.coordinator_address, args.num_processes, args.process_id)
    )
    import equinox as eqx
    import numpy as np

    from jaxarc.agents import make_train

    if args.bc:
        config = tiny_bc_config(args.batch_tasks, args.updates)
    else:
        config = tiny_config(args.tasks_file, args.batch_tasks)
    results = {}
    for size in args.mesh_sizes:
        mesh = make_data_mesh(jax.devices()[:size])
        init, update = make_train(config, mesh)
        tic = time.perf_counter()
        state = eqx.filter_jit(init)(jax.random.key(config.seed))  # one compile, not many
        print(f"mesh {size}: init {time.perf_counter() - tic:.1f} s", flush=True)
        losses = []
        for _ in range(args.updates):
            tic = time.perf_counter()
            state, metrics = update(state)
            losses.append(float(metrics["loss"]))
            if args.bc:
                assert float(metrics["stage_bc"]) == 1.0, "expected a behaviour-cloning update"
            print(f"mesh {size}: update {time.perf_counter() - tic:.1f} s", flush=True)
        if args.bc:  # the BC program constrains its expert episodes to the data axis
            from jaxarc.agents.grpo.behaviour_cloning import make_bc_update
            from jaxarc.agents.grpo.train import load_task_source
            from jaxarc.agents.grpo.train_step import make_optimizer

            bc = make_bc_update(config, load_task_source(config), make_optimizer(config), mesh)
            text = bc.lower(state).as_text()  # lowered only (no second compile)
            # constraints over the data axis (Shardy's spelling, then GSPMD's)
            results[f"data_constraints_{size}"] = np.asarray(
                text.count('[{"data"}') + text.count(f"devices=[{size},")
            )
        leaves = jax.tree.leaves(eqx.filter(state.policy, eqx.is_inexact_array))
        replicas = {len(leaf.sharding.device_set) for leaf in leaves}
        host = [np.asarray(leaf.addressable_shards[0].data).ravel() for leaf in leaves]
        results[f"losses_{size}"] = np.asarray(losses)
        results[f"params_{size}"] = np.concatenate(host)
        results[f"replicas_{size}"] = np.asarray(sorted(replicas))
    results["global_devices"] = np.asarray(jax.device_count())
    results["process_count"] = np.asarray(jax.process_count())
    if is_primary_process():
        np.savez(args.out, **results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
