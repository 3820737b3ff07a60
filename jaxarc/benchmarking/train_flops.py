"""FLOP figures of ``jaxarc bench train``: XLA's cost analysis of the compiled surrogate step
and of the policy's two calls, and a same-run float32 matmul as the machine's practical peak.

* :func:`step_flops`: one surrogate step (forward + backward + optimiser) on a batch;
* :func:`policy_flops`: ``encode_task`` and ``act`` on one observation;
* :func:`matmul_reference`: an ``n x n`` matmul of about a given FLOP count, timed;
* :func:`flops_measurements`: all of them for a training minibatch, with the achieved FLOP/s.
"""

from __future__ import annotations

from typing import Any

from jaxarc.benchmarking.timing import timed


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
    seconds = min(timed(lambda: matmul(a, b))[1] for _ in range(repeats))
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
