"""``gymnasium.vector.VectorEnv`` over batched jaxarc environments: one jitted call per step.

Autoreset follows Gymnasium 1.x (``metadata["autoreset_mode"]``):

* ``NEXT_STEP`` (default): the step that ends an episode returns its last observation;
  the *next* ``step`` resets that environment (its action is ignored, reward 0,
  terminated and truncated False) and returns the new episode's first observation.
* ``SAME_STEP``: the ending step already returns the new episode's first observation;
  the ending one is in ``info["final_obs"]`` (with ``info["_final_obs"]`` marking which).
* ``DISABLED``: nothing resets by itself; call ``reset(options={"reset_mask": mask})``.

Autoresets sample a new task and pair, and only the environments that ended are reset
(the indices of those, padded to a power of two, go into the compiled step): the cost of
resets is proportional to the episodes that end, not ``num_envs`` per ending. Environment
``i`` resets from ``jax.random.split(reset_key, num_envs)[i]`` whatever else resets with it.
For a bank, ``reset(seed=s)`` plays exactly what
``batch_reset(jax.random.split(jax.random.key(s), num_envs), config, source)`` does. A
generated source resets from a task pool (that of its params, see
:class:`~jaxarc.gymnax.environment.ArcEnvironment`) which this env renews as environments
reset: up to ``task_refresh`` of those resetting at once play a newly generated task, which
replaces the pool slot they drew (:func:`~jaxarc.envs.task_pool.refresh_drawn_slots`), so
training never settles on a fixed set of tasks.

With ``episode_context="at_reset"`` observations leave out the episode's constants (input
grid, demonstration pairs); ``info["episode_context"]`` holds them (a dict of arrays, one
row per new episode) for the environments in ``info["episode_context_envs"]``, at
``reset`` and at every autoreset.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from jaxarc.envs.arguments import check_count
from jaxarc.envs.types import SourceRef
from jaxarc.gym.backend import (
    RENDER_MODES,
    JaxBackend,
    check_render_mode,
    episode_length_option,
)
from jaxarc.gym.spaces import (
    action_from_gymnasium,
    action_space,
    context_to_numpy,
    observation_space,
    observation_to_numpy,
)
from jaxarc.gym.vector_calls import (
    info_arrays,
    merge,
    renew_pool,
    slots,
    vector_reset,
    vector_reset_at,
    vector_step,
)

INFO_FIELDS: tuple[str, ...] = ("task_index", "pair", "success", "similarity", "step_count")
DEFAULT_TASK_REFRESH = 4
"""Environments per reset that play a newly generated task (generated sources): enough
that every reset gets a new task when few environments end at once, few enough that the
generated faces keep more than half the bank faces' speed (docs/environment.md)."""


def parse_autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    """An :class:`AutoresetMode` from itself, its value (``"NextStep"``) or its name."""
    if isinstance(mode, AutoresetMode):
        return mode
    for candidate in AutoresetMode:
        if str(mode).lower() in (candidate.value.lower(), candidate.name.lower()):
            return candidate
    raise ValueError(
        f"unknown autoreset_mode {mode!r}; use one of {[m.name.lower() for m in AutoresetMode]}"
    )


class ArcGymnasiumVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` ARC environments stepped together by one jitted, vmapped call.

    Args mirror :class:`~jaxarc.gym.env.ArcGymnasiumEnv`, plus ``num_envs``,
    ``autoreset_mode`` (an :class:`gymnasium.vector.AutoresetMode` or its string value) and,
    for generated sources, ``task_refresh``: at every reset, up to that many of the
    environments resetting (the first, by index) play a newly generated task, which also
    renews the pool slot they drew (default :data:`DEFAULT_TASK_REFRESH`; ``0``: the pool
    stays fixed). So episodes draw from a pool that keeps changing, and when fewer
    environments reset at once, every one of them gets a new task; a ``reset(seed=s)``
    starts again from the environment's first pool, so that it replays the same episodes.
    Actions are the batched action space (a dict of arrays with a leading ``num_envs``
    axis). ``info`` holds ``task_index``, ``pair``, ``success``, ``similarity`` and
    ``step_count`` arrays (each with its ``_name`` mask, all True).
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        env_name: str = "ARC-AGI-1",
        num_envs: int = 1,
        render_mode: str | None = None,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        jax_env=None,
        jax_params=None,
        cell_size: int = 16,
        episode_steps: int | None = None,
        task_refresh: int = DEFAULT_TASK_REFRESH,
        **options: Any,
    ):
        check_render_mode(render_mode)
        options = episode_length_option(episode_steps, options)
        num_envs = check_count(num_envs, "num_envs", owner=type(self).__name__)
        owner = type(self).__name__
        self.task_refresh = check_count(task_refresh, "task_refresh", minimum=0, owner=owner)
        if jax_env is not None:
            if options:
                raise TypeError(f"options {sorted(options)} do not apply when jax_env is given")
            self.backend = JaxBackend.from_env(jax_env, jax_params, type(self).__name__)
        else:
            self.backend = JaxBackend.from_name(env_name, **options)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.num_envs = num_envs
        self.render_mode = render_mode
        self.cell_size = cell_size
        config = self.backend.config
        self.single_observation_space = observation_space(config, self.backend.source.max_demos)
        self.single_action_space = action_space(config)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._static = {"config": config, "source_ref": SourceRef(self.backend.source)}
        self._states = None
        self._obs = None
        self._key = None
        self._pending_reset = np.zeros(num_envs, dtype=bool)
        self._context_at_reset = config.environment.episode_context == "at_reset"
        self._pool = self.backend.task_pool  # (generated sources; renewed as envs reset)

    @property
    def task_pool(self):
        """The pool of generated tasks resets draw from now (``None`` for a bank)."""
        return self._pool

    @property
    def config(self):
        return self.backend.config

    @property
    def states(self):
        """The batched :class:`~jaxarc.envs.types.ArcState` (leading ``num_envs`` axis)."""
        return self._states

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset all environments, or those in ``options["reset_mask"]`` (``bool [num_envs]``).

        ``seed`` must be one int (a list of per-env seeds is not supported: the batch is
        split from one key). ``options`` may also hold ``task_id``/``task_index``/``pair``
        (one value for all, or a list of ``num_envs`` values).
        """
        if isinstance(seed, list | tuple):
            raise ValueError("seed must be one int: the environments' keys are split from it")
        super().reset(seed=seed)
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"options['reset_mask'] must be bool [{self.num_envs}]")
            if self._states is None:
                raise RuntimeError("reset with a reset_mask needs a full reset() first")
        task_indices, pair_indices = self.backend.reset_indices(options, self.num_envs)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        else:  # a seeded reset replays: the pool starts again from the environment's first
            self._pool = self.backend.task_pool
        root = jax.random.key(seed)
        keys = jax.random.split(root, self.num_envs)
        self._key = jax.random.fold_in(root, self.num_envs)
        kept = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        self._renew_pool(root, kept, derive=False)
        states, obs, context = vector_reset(
            keys,
            jnp.asarray(task_indices),
            jnp.asarray(pair_indices),
            self.backend.reward_params,
            self._pool,
            **self._static,
        )
        if mask is None:
            self._states, self._obs = states, obs
            reset_envs = np.arange(self.num_envs)
        else:
            self._states, self._obs = merge(jnp.asarray(mask), states, obs, self._states, self._obs)
            reset_envs = np.flatnonzero(mask)
        self._pending_reset = (
            np.zeros(self.num_envs, bool) if mask is None else self._pending_reset & ~mask
        )
        host_obs, host_info = jax.device_get((self._obs, info_arrays(self._states)))
        info = self._vector_info(host_info)
        info["task_id"] = np.array([self.backend.task_id(int(i)) for i in host_info["task_index"]])
        info["_task_id"] = np.ones(self.num_envs, dtype=bool)
        if self._context_at_reset:
            rows = jax.tree.map(lambda x: x[jnp.asarray(reset_envs)], context)
            info |= self._context_info(jax.device_get(rows), reset_envs)
        return observation_to_numpy(host_obs), info

    def step(self, actions):
        if self._states is None:
            raise RuntimeError("call reset() before step()")
        if self.autoreset_mode == AutoresetMode.DISABLED and self._pending_reset.any():
            ended = np.flatnonzero(self._pending_reset).tolist()
            raise RuntimeError(
                f"environments {ended[:10]} ended; with autoreset DISABLED reset them first: "
                "reset(options={'reset_mask': mask})"
            )
        structured = action_from_gymnasium(actions, self.config)
        if np.shape(structured.operation) != (self.num_envs,):
            raise ValueError(
                f"actions must have a leading axis of num_envs={self.num_envs}, "
                f"got operation shape {np.shape(structured.operation)}"
            )
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        pending = np.flatnonzero(self._pending_reset) if next_step else np.zeros(0, np.int32)
        padded = jnp.asarray(slots(pending, self.num_envs)) if len(pending) else None
        self._renew_pool(self._key, pending, derive=True)  # (the step's resets draw from it)
        out = vector_step(
            self._states,
            structured,
            padded,
            self._key,
            self.backend.reward_params,
            self._pool,
            mode=self.autoreset_mode.value,
            **self._static,
        )
        self._states, self._obs, reward, terminated, truncated, self._key, reset_key, ctx = out
        host = jax.device_get(
            (self._obs, reward, terminated, truncated, info_arrays(self._states), ctx)
        )
        host_obs, reward, terminated, truncated, host_info, ctx = host
        host_obs = observation_to_numpy(host_obs)
        ended = np.logical_or(terminated, truncated)
        info = self._vector_info(host_info)
        if next_step and self._context_at_reset and len(pending):
            info |= self._context_info(jax.tree.map(lambda x: x[: len(pending)], ctx), pending)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            ended_envs = np.flatnonzero(ended)
            final_obs = host_obs
            host_obs = {k: np.array(v) for k, v in host_obs.items()}  # (host arrays: read-only)
            final_info = host_info
            self._renew_pool(reset_key, ended_envs, derive=False)
            self._states, self._obs, ctx, row_obs = vector_reset_at(
                self._states,
                self._obs,
                jnp.asarray(slots(ended_envs, self.num_envs)),
                reset_key,
                self.backend.reward_params,
                self._pool,
                **self._static,
            )
            row_obs, ctx, host_info = jax.device_get((row_obs, ctx, info_arrays(self._states)))
            for name, rows in observation_to_numpy(row_obs).items():
                host_obs[name][ended_envs] = rows[: len(ended_envs)]
            info = self._vector_info(host_info)
            info |= self._final_info(final_obs, final_info, ended)
            if self._context_at_reset:
                rows = jax.tree.map(lambda x: x[: len(ended_envs)], ctx)
                info |= self._context_info(rows, ended_envs)
        self._pending_reset = (
            ended if self.autoreset_mode != AutoresetMode.SAME_STEP else ended & False
        )
        return host_obs, reward, terminated, truncated, info

    def _renew_pool(self, key, envs: np.ndarray, derive: bool) -> None:
        """Renew the pool slots the first ``task_refresh`` of ``envs`` will draw when they
        reset from ``key`` (see :func:`~jaxarc.gym.vector_calls.renew_pool`)."""
        if self._pool is None or self.task_refresh == 0 or len(envs) == 0:
            return
        first = np.full(self.task_refresh, self.num_envs, dtype=np.int32)
        count = min(self.task_refresh, len(envs))
        first[:count] = envs[:count]
        self._pool = renew_pool(
            self._pool,
            key,
            jnp.asarray(first),
            jnp.int32(count),
            source_ref=self._static["source_ref"],
            num_envs=self.num_envs,
            derive=derive,
        )

    def _context_info(self, context, envs: np.ndarray) -> dict:
        """``episode_context`` (a dict of arrays, one row per new episode) and
        ``episode_context_envs`` (the environments those rows belong to)."""
        return {
            "episode_context": context_to_numpy(context),
            "episode_context_envs": np.asarray(envs, dtype=np.int64),
        }

    def _vector_info(self, host: dict) -> dict:
        info: dict[str, Any] = {}
        all_envs = np.ones(self.num_envs, dtype=bool)
        for name in INFO_FIELDS:
            info[name] = np.asarray(host[name])
            info[f"_{name}"] = all_envs
        return info

    def _final_info(self, numpy_obs: dict, final, ended: np.ndarray) -> dict:
        obs_array = np.full(self.num_envs, None, dtype=object)
        info_array = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(ended):
            obs_array[i] = {k: v[i] for k, v in numpy_obs.items()}
            info_array[i] = {k: np.asarray(final[k])[i].item() for k in INFO_FIELDS}
        return {
            "final_obs": obs_array,
            "_final_obs": ended,
            "final_info": info_array,
            "_final_info": ended,
        }

    def render(self):
        """A tuple with each environment's frame (see :class:`ArcGymnasiumEnv.render`)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; returning None")
            return None
        if self._states is None:
            raise RuntimeError("call reset() before render()")
        from jaxarc.render import draw_selection, render_rgb, to_ansi

        grids, selections, shapes = jax.device_get(
            (self._states.grid, self._states.selection, self._states.grid_shape)
        )
        if self.render_mode == "rgb_array":
            return tuple(
                draw_selection(render_rgb(g, self.cell_size), s, self.cell_size)
                for g, s in zip(grids, selections, strict=True)
            )
        return tuple(to_ansi(g, shape=s) for g, s in zip(grids, shapes, strict=True))

    def render_thumbnails(self, cell_size: int = 4, columns: int | None = None) -> np.ndarray:
        """Every environment's working grid as one image of thumbnails."""
        from jaxarc.render import render_batch

        grids, shapes = jax.device_get((self._states.grid, self._states.grid_shape))
        return render_batch(grids, cell_size, shapes=shapes, columns=columns)
