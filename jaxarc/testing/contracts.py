"""Contract checks that any jaxarc environment must pass, on every face.

Modelled on the test matrices of Jumanji and gymnax: reset and step give the shapes and
dtypes their space/spec declares, every observation lies in its space, values are finite,
``jit`` / ``vmap`` / ``lax.scan`` apply, a seed gives the same episode twice, and the
environments of a batch are independent (permuting the keys permutes the results).

One compiled rollout per face and environment does the work (``batch`` environments,
``steps`` random actions each, auto-reset where the face has it); it is called three times
(twice with the same keys, once with the keys reversed). Each check raises
:class:`ContractError` naming the face and what broke, and returns a short report.

>>> from jaxarc.testing import check_environment
>>> check_environment("gen/flip")                      # a registered name, every face
>>> check_environment(my_task_bank, faces=("functional", "gymnax"))  # any task source
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.arguments import check_count, check_names
from jaxarc.envs.config import RewardParams
from jaxarc.envs.functional import reset_one, step_one
from jaxarc.envs.integers import check_integers
from jaxarc.envs.types import ArcObservation, SourceRef
from jaxarc.gymnax.registry import build_environment, make
from jaxarc.gymnax.spaces import StructuredActionSpace, observation_space

FACES: tuple[str, ...] = ("functional", "gymnax", "gymnasium", "jumanji")


class ContractError(AssertionError):
    """An environment broke one of the contracts (the message names the face and check)."""


def _sizes(who: str, batch: int | None, steps: int, seed: int) -> tuple[int | None, int, int]:
    """``(batch, steps, seed)`` checked: a contract run of no environment or no step would
    pass while checking nothing, and a negative count fails deep inside JAX."""
    if batch is not None:
        batch = check_count(batch, "batch", owner=who)
    steps = check_count(steps, "steps", owner=who)
    check_integers(seed, f"seed of {who}")
    return batch, steps, int(seed)


def _require(ok: Any, face: str, what: str) -> None:
    if not bool(np.all(np.asarray(ok))):
        raise ContractError(f"[{face}] {what}")


def _leaves_equal(a: Any, b: Any) -> bool:
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    if len(la) != len(lb):
        return False
    pairs = zip(la, lb, strict=True)
    return all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True) for x, y in pairs)


def _check_finite(tree: Any, face: str, what: str) -> None:
    for leaf in jax.tree.leaves(tree):
        leaf = np.asarray(leaf)
        if np.issubdtype(leaf.dtype, np.floating):
            _require(np.isfinite(leaf), face, f"{what} has non-finite values")


def _check_batched_rollout(
    face: str, rollout: Callable, keys: jax.Array, batch: int, steps: int
) -> tuple[Any, Any]:
    """Determinism and lane independence of ``rollout(keys) -> (first, trace)``."""
    first, trace = jax.block_until_ready(rollout(keys))
    again = rollout(keys)
    _require(_leaves_equal((first, trace), again), face, "the same keys gave a different rollout")
    flipped = rollout(keys[::-1])
    unflip = (
        jax.tree.map(lambda x: x[::-1], flipped[0]),
        jax.tree.map(lambda x: x[:, ::-1], flipped[1]),
    )
    _require(
        _leaves_equal((first, trace), unflip),
        face,
        "reversing the keys of a vmapped batch did not reverse its results",
    )
    for leaf in jax.tree.leaves(first):
        _require(np.shape(leaf)[:1] == (batch,), face, "reset under vmap lost the batch axis")
    for leaf in jax.tree.leaves(trace):
        _require(np.shape(leaf)[:2] == (steps, batch), face, "scan/vmap lost the step axes")
    _check_finite((first, trace), face, "the rollout")
    return first, trace


def _check_observation_shapes(obs: ArcObservation, face: str, canvas, max_demos: int) -> None:
    lead = obs.grid.shape[:-2]
    expected = {
        "grid": (*canvas,),
        "demo_inputs": (max_demos, *canvas),
        "demo_mask": (max_demos,),
        "step_count": (),
    }
    for field, shape in expected.items():
        got = tuple(getattr(obs, field).shape[len(lead) :])
        _require(got == shape, face, f"observation.{field} has shape {got}, expected {shape}")


def check_functional(env: Any, *, batch: int = 2, steps: int = 4, seed: int = 0) -> dict[str, Any]:
    """The functional core (``reset_one`` / ``step_one``) under ``jit(vmap(scan))``."""
    face = "functional"
    batch, steps, seed = _sizes("check_functional", batch, steps, seed)
    config, source = env.config, env.task_source
    rollout = _functional_rollout(config, SourceRef(source), steps)
    keys = jax.random.split(jax.random.key(seed), batch)
    first, (obs, reward, done, info, contained) = _check_batched_rollout(
        face, rollout, keys, batch, steps
    )
    _require(contained, face, "an observation fell outside the observation space")
    _require(reward.dtype == np.float32 and done.dtype == np.bool_, face, "reward/done dtypes")
    _check_observation_shapes(first, face, config.dataset.canvas_shape, source.max_demos)
    _check_observation_shapes(obs, face, config.dataset.canvas_shape, source.max_demos)
    return {"face": face, "batch": batch, "steps": steps, "episodes_ended": int(done.sum())}


@functools.lru_cache(maxsize=32)
def _functional_rollout(config, source_ref: SourceRef, steps: int) -> Callable:
    """One compiled rollout per (config, task source, steps): aliases of a name share it."""
    action_space = StructuredActionSpace(config)
    obs_space = observation_space(config, source_ref.source.max_demos)

    @jax.jit
    def rollout(keys):
        def one(key):
            reset_key, act_key = jax.random.split(key)
            minus_one = jnp.int32(-1)
            state, first = reset_one(
                reset_key, config, source_ref, minus_one, minus_one, RewardParams()
            )

            def body(state, k):
                action = action_space.sample(k)
                state, obs, reward, done, info = step_one(state, action, config)
                return state, (obs, reward, done, info, obs_space.contains(obs))

            _, trace = jax.lax.scan(body, state, jax.random.split(act_key, steps))
            return first, trace

        first, trace = jax.vmap(one)(keys)
        return first, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), trace)

    return rollout


def check_gymnax(env: Any, params: Any = None, *, batch: int = 2, steps: int = 4, seed: int = 0):
    """The gymnax face: ``env.reset`` / ``env.step`` (auto-reset) under ``jit(vmap(scan))``."""
    face = "gymnax"
    batch, steps, seed = _sizes("check_gymnax", batch, steps, seed)
    params = env.default_params if params is None else params
    space, obs_space = env.action_space(params), env.observation_space(params)

    @jax.jit
    def rollout(keys):
        def one(key):
            reset_key, run_key = jax.random.split(key)
            first, state = env.reset(reset_key, params)

            def body(state, k):
                act_key, step_key = jax.random.split(k)
                action = space.sample(act_key)
                obs, state, reward, term, trunc, _ = env.step(step_key, state, action, params)
                done = term | trunc
                checks = (obs_space.contains(obs), space.contains(action))
                return state, (obs, reward, done, checks)

            _, trace = jax.lax.scan(body, state, jax.random.split(run_key, steps))
            return first, trace

        first, trace = jax.vmap(one)(keys)
        return first, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), trace)

    keys = jax.random.split(jax.random.key(seed), batch)
    first, (obs, reward, done, (obs_ok, action_ok)) = _check_batched_rollout(
        face, rollout, keys, batch, steps
    )
    _require(obs_ok, face, "an observation fell outside env.observation_space(params)")
    _require(action_ok, face, "action_space.sample gave an action outside the space")
    _require(reward.dtype == np.float32 and done.dtype == np.bool_, face, "reward/done dtypes")
    canvas, max_demos = env.config.dataset.canvas_shape, env.task_source.max_demos
    _check_observation_shapes(first, face, canvas, max_demos)
    return {"face": face, "batch": batch, "steps": steps, "episodes_ended": int(done.sum())}


def check_jumanji(env: Any, *, batch: int = 2, steps: int = 4, seed: int = 0):
    """The Jumanji face: specs validate what reset/step return, under ``jit(vmap(scan))``."""
    from jumanji.types import StepType

    face = "jumanji"
    batch, steps, seed = _sizes("check_jumanji", batch, steps, seed)
    num_values = jnp.asarray(env.action_spec.num_values, jnp.int32)

    @jax.jit
    def rollout(keys):
        def one(key):
            reset_key, run_key = jax.random.split(key)
            state, first = env.reset(reset_key)

            def body(state, k):
                action = jax.random.randint(k, num_values.shape, 0, num_values, jnp.int32)
                state, timestep = env.step(state, action)
                return state, timestep

            _, trace = jax.lax.scan(body, state, jax.random.split(run_key, steps))
            return first, trace

        first, trace = jax.vmap(one)(keys)
        return first, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), trace)

    keys = jax.random.split(jax.random.key(seed), batch)
    first, trace = _check_batched_rollout(face, rollout, keys, batch, steps)
    try:
        for b in range(batch):
            env.observation_spec.validate(jax.tree.map(lambda x, b=b: x[b], first.observation))
            for t in range(steps):
                ts = jax.tree.map(lambda x, b=b, t=t: x[t, b], trace)
                env.observation_spec.validate(ts.observation)
                env.reward_spec.validate(ts.reward)
                env.discount_spec.validate(ts.discount)
    except ValueError as err:
        raise ContractError(f"[{face}] a timestep does not match the specs: {err}") from err
    _require(first.step_type == StepType.FIRST, face, "reset's step_type is not FIRST")
    last = np.asarray(trace.step_type) == int(StepType.LAST)
    ended = last | np.asarray(trace.extras["terminated"] | trace.extras["truncated"])
    _require(last == ended, face, "LAST step types and the episode's end disagree")
    return {"face": face, "batch": batch, "steps": steps, "episodes_ended": int(last.sum())}


def check_gymnasium(env: Any, *, steps: int = 4, seed: int = 0):
    """The Gymnasium face: spaces contain what reset/step return, seeds repeat episodes,
    and Gymnasium's own ``env_checker.check_env`` passes."""
    from gymnasium.utils.env_checker import check_env

    face = "gymnasium"
    _, steps, seed = _sizes("check_gymnasium", None, steps, seed)
    check_env(env.unwrapped, skip_render_check=True)

    def play() -> list:
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = [obs]
        for _ in range(steps):
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            _require(env.observation_space.contains(obs), face, "obs outside observation_space")
            _require(np.isfinite(reward), face, "non-finite reward")
            _require(isinstance(terminated, bool) and isinstance(truncated, bool), face, "flags")
            trace.append((obs, reward, terminated, truncated))
            if terminated or truncated:
                obs, _ = env.reset()
        return trace

    first = play()
    _require(env.observation_space.contains(first[0]), face, "reset obs outside the space")
    _require(_leaves_equal(first, play()), face, "the same seed gave a different episode")
    return {"face": face, "batch": 1, "steps": steps}


def check_environment(
    env: str | AbstractTaskSource,
    *,
    faces: Sequence[str] = FACES,
    batch: int = 2,
    steps: int = 4,
    seed: int = 0,
    **options: Any,
) -> list[dict[str, Any]]:
    """Run the contracts of ``faces`` on a registered name or any task source.

    ``faces`` is one face name or a list of them (at least one); ``batch`` and ``steps``
    are positive ints. ``options`` are :func:`jaxarc.make`'s (``selection_format=``,
    ``max_episode_steps=``, ``data_dir=``...). Returns one report per face; raises
    :class:`ContractError`.
    """
    faces = check_names(faces, "faces", "check_environment")
    unknown = set(faces) - set(FACES)
    if unknown:
        raise ValueError(f"unknown face(s) {sorted(unknown)}; use some of {FACES}")
    batch, steps, seed = _sizes("check_environment", batch, steps, seed)
    if isinstance(env, str):
        gymnax_env, params = make(env, **options)
        name = env
    else:
        gymnax_env, params = build_environment(env, name="custom", **options)
        name = None
    reports = []
    for face in faces:
        if face == "functional":
            reports.append(check_functional(gymnax_env, batch=batch, steps=steps, seed=seed))
        elif face == "gymnax":
            report = check_gymnax(gymnax_env, params, batch=batch, steps=steps, seed=seed)
            reports.append(report)
        elif face == "jumanji":
            from jaxarc.jumanji import ArcJumanjiEnv

            jumanji_env = ArcJumanjiEnv(
                gymnax_env.config, gymnax_env.task_source, reward=params.reward, name=name or ""
            )
            reports.append(check_jumanji(jumanji_env, batch=batch, steps=steps, seed=seed))
        else:
            from jaxarc.gym.env import ArcGymnasiumEnv

            gym_env = ArcGymnasiumEnv(jax_env=gymnax_env, jax_params=params)
            reports.append(check_gymnasium(gym_env, steps=steps, seed=seed))
    return reports


__all__ = [
    "FACES",
    "ContractError",
    "check_environment",
    "check_functional",
    "check_gymnasium",
    "check_gymnax",
    "check_jumanji",
]
