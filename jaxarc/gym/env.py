"""``gymnasium.Env`` over the jitted jaxarc core: ``gymnasium.make("jaxarc/ARC-AGI-1-v0")``."""

from __future__ import annotations

import multiprocessing
import sys
from typing import TYPE_CHECKING, Any

import gymnasium
import jax
import numpy as np

from jaxarc.envs.functional import arc_reset, arc_step
from jaxarc.grid.operation_ids import NUM_OPERATIONS, OPERATION_NAMES
from jaxarc.gym.backend import (
    SINGLE_RENDER_MODES,
    JaxBackend,
    check_render_mode,
    episode_length_option,
)

if TYPE_CHECKING:  # importing gymnax is slow; the class is imported when an env is built
    from jaxarc.gymnax.environment import ArcEnvironment, ArcEnvParams

from jaxarc.gym.flat import FlatCodec, flat_options
from jaxarc.gym.spaces import (
    action_from_gymnasium,
    action_space,
    observation_space,
    observation_to_numpy,
)


class ArcGymnasiumEnv(gymnasium.Env):
    """One ARC environment with Gymnasium's API; each ``step`` is one jitted call.

    Args:
        env_name: a name for :func:`jaxarc.make` (ignored when ``jax_env`` is given).
        render_mode: ``"rgb_array"``, ``"ansi"`` or ``None`` (``"human"`` is not supported).
        jax_env: an existing gymnax ``ArcEnvironment`` to run instead of making one: a bare
            one (a wrapped environment is refused, as its wrappers would be dropped: use
            this adapter's options, ``allowed_operations=``, ``flat=``, ``fields=``).
        jax_params: its ``ArcEnvParams`` (with ``jax_env``).
        cell_size: pixels per cell of ``rgb_array`` frames.
        episode_steps: deprecated name of the ``max_episode_steps`` option.
        flat: flat spaces for SB3/SBX/CleanRL: ``Discrete`` actions over the allowed
            operations and a ``float32`` ``Box`` observation of ``("grid", "input_grid")``
            (see :mod:`jaxarc.gym.flat`).
        action_format: ``"dict"`` (structured, the default), ``"discrete"`` or
            ``"multi_discrete"`` (``MultiDiscrete([K, H, W])``); overrides ``flat``'s.
        fields: observation fields of the flat ``Box`` observation (one name or a list of
            distinct names); overrides ``flat``'s.
        **options: :func:`jaxarc.make` options (``max_episode_steps``, ``selection_format``,
            ``allowed_operations`` as ids or names...). Through ``gymnasium.make``,
            ``max_episode_steps=N`` is Gymnasium's own keyword: its ``TimeLimit`` wrapper ends
            episodes after N steps (``truncated=True``), the environment's own limit staying
            at its default.

    ``reset(seed=..., options={"task_id": ..., "pair": ...})`` plays a chosen task and pair
    (``task_index`` instead of ``task_id`` works too); without options both are sampled.
    Observations are dicts of NumPy arrays; ``info`` holds ``task_id``, ``task_index``,
    ``pair``, ``success`` and ``similarity``. Stepping after the episode ended changes
    nothing (reward 0) until ``reset``.
    """

    metadata = {"render_modes": list(SINGLE_RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        env_name: str = "ARC-AGI-1",
        render_mode: str | None = None,
        *,
        jax_env: ArcEnvironment | None = None,
        jax_params: ArcEnvParams | None = None,
        cell_size: int = 16,
        episode_steps: int | None = None,
        flat: bool = False,
        action_format: str | None = None,
        fields: tuple[str, ...] | None = None,
        **options: Any,
    ):
        check_render_mode(render_mode, SINGLE_RENDER_MODES)
        action_format, fields = flat_options(flat, action_format, fields)
        options = episode_length_option(episode_steps, options)
        if jax_env is not None:
            if options:
                raise TypeError(f"options {sorted(options)} do not apply when jax_env is given")
            self.backend = JaxBackend.from_env(jax_env, jax_params, type(self).__name__)
        else:
            self.backend = JaxBackend.from_name(env_name, **options)
        self.render_mode = render_mode
        self.cell_size = cell_size
        self.codec = FlatCodec.create(self.backend.config, action_format, fields)
        self.observation_space = self.codec.observation_space(
            observation_space(self.backend.config, self.backend.source.max_demos)
        )
        self.action_space = self.codec.action_space(action_space(self.backend.config))
        self._state = None
        self._last_operation = -1
        self._frames: list[np.ndarray] = []

    @property
    def config(self):
        return self.backend.config

    @property
    def state(self):
        """The current :class:`~jaxarc.envs.types.ArcState` (JAX arrays), ``None`` before reset."""
        return self._state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        task_index, pair_index = self.backend.reset_indices(options)
        key = jax.random.key(int(self.np_random.integers(0, 2**31 - 1)))
        self._state, obs = arc_reset(
            key,
            self.config,
            self.backend.source,
            task_index,
            pair_index,
            self.backend.reward_params,
        )
        self._last_operation = -1
        self._frames = []
        self._collect_frame()
        host_obs, host_state = jax.device_get((obs, self._info_arrays(self._state)))
        return self.codec.observation(observation_to_numpy(host_obs)), self._info(host_state)

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = self.codec.to_structured(action)
        structured = action_from_gymnasium(action, self.config)
        self._state, obs, reward, _, info = arc_step(self._state, structured, self.config)
        self._last_operation = int(np.asarray(action["operation"]))
        self._collect_frame()
        host = jax.device_get((obs, reward, info, self._info_arrays(self._state)))
        host_obs, host_reward, host_info, host_state = host
        return (
            self.codec.observation(observation_to_numpy(host_obs)),
            float(host_reward),
            bool(host_info["terminated"]),
            bool(host_info["truncated"]),
            self._info(host_state),
        )

    @staticmethod
    def _info_arrays(state) -> dict:
        return {
            "task_index": state.task_index,
            "pair": state.pair_index,
            "success": state.success,
            "similarity": state.similarity,
            "step_count": state.step_count,
        }

    def _info(self, host: dict) -> dict:
        task_index = int(host["task_index"])
        return {
            "task_id": self.backend.task_id(task_index),
            "task_index": task_index,
            "pair": int(host["pair"]),
            "success": bool(host["success"]),
            "similarity": float(host["similarity"]),
            "step_count": int(host["step_count"]),
        }

    def _frame(self) -> np.ndarray:
        from jaxarc.render import draw_selection, render_rgb

        grid, selection = np.asarray(self._state.grid), np.asarray(self._state.selection)
        return draw_selection(render_rgb(grid, self.cell_size), selection, self.cell_size)

    def _collect_frame(self) -> None:
        if self.render_mode == "rgb_array_list":
            self._frames.append(self._frame())

    def render(self):
        """``rgb_array``: the working grid with the last selection outlined;
        ``rgb_array_list``: those frames since the last ``render()`` or ``reset()`` (the reset
        frame first), emptied by each call; ``ansi``: text, coloured unless ``NO_COLOR`` is set.
        """
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; returning None")
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        from jaxarc.render import colour_enabled, to_ansi, to_text

        if self.render_mode == "rgb_array":
            return self._frame()
        if self.render_mode == "rgb_array_list":
            frames, self._frames = self._frames, []
            return frames
        op = self._last_operation
        name = OPERATION_NAMES[op] if 0 <= op < NUM_OPERATIONS else "-"
        header = f"step {int(self._state.step_count)}  last: {name}"
        shape = np.asarray(self._state.grid_shape)
        draw = to_ansi if colour_enabled(stream=None) else to_text
        return header + "\n" + draw(np.asarray(self._state.grid), shape=shape) + "\n"


def make_gymnasium_env(env_name: str = "ARC-AGI-1", render_mode: str | None = None, **kwargs):
    """The entry point of the registered ids (see :func:`register_gymnasium_envs`).

    A function rather than the class, so that ``gymnasium.make(..., render_mode="human")``
    reaches :class:`ArcGymnasiumEnv` and fails with a clear message instead of Gymnasium
    silently substituting a pygame window wrapper, and so that an ``AsyncVectorEnv`` that
    would fork this process is refused before it forks (see :func:`refuse_forking_workers`).
    """
    refuse_forking_workers()
    return ArcGymnasiumEnv(env_name, render_mode, **kwargs)


def refuse_forking_workers() -> None:
    """``RuntimeError`` when called while a ``gymnasium.vector.AsyncVectorEnv`` is being
    built with the ``fork`` start method (``make_vec(..., vectorization_mode="async")`` on
    Linux): its workers would be forked after JAX started its threads and deadlock.

    ``AsyncVectorEnv`` builds one environment in the parent (for the spaces) before it
    starts the workers; that call is where the refusal happens, so nothing hangs. With
    ``vector_kwargs={"context": "spawn"}`` (or ``"forkserver"``) the workers start fresh
    interpreters and work.
    """
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if frame.f_code.co_name == "__init__" and isinstance(
            owner, gymnasium.vector.AsyncVectorEnv
        ):
            context = frame.f_locals.get("context")
            if multiprocessing.get_context(context).get_start_method() == "fork":
                raise RuntimeError(
                    "gymnasium.make_vec(..., vectorization_mode='async') would fork this "
                    "process after JAX started, and forked JAX deadlocks. Use the default "
                    "vectorization_mode (one batched, jitted call for all environments: much "
                    "faster than worker processes), or start the workers with spawn: "
                    "make_vec(..., vectorization_mode='async', "
                    "vector_kwargs={'context': 'spawn'}) (under `if __name__ == '__main__':`)."
                )
            return
        frame = frame.f_back
