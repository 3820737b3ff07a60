"""Saving and loading environment states without the task bank.

A state file (``.npz``) holds every per-environment leaf of an :class:`ArcState` (single or
batched) by its pytree path, plus a JSON header describing the configuration it was made
with. The task source is left out (the state keeps its task index); :func:`load_state`
re-attaches the source you pass, after checking it fits the header. The episode's pair
(``state.pair``, a copy of the source's input and target grids) is not written either:
loading reads it again from the source, so files stay as they were before the state kept it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.data.bank import TaskBank
from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import JaxArcConfig, RewardParams
from jaxarc.envs.episode import source_episode_pair
from jaxarc.envs.functional import as_task_source, check_canvas, reset_one
from jaxarc.envs.types import ArcState, SourceRef

FORMAT_VERSION = 1
_HEADER = "__header__"
_DERIVED = ".pair"  # leaves under this path are read from the source on load, not saved
_FINGERPRINTS: dict[int, tuple[AbstractTaskSource, str]] = {}


def source_fingerprint(source: AbstractTaskSource) -> str:
    """A SHA-256 of what a saved state depends on in ``source``: for a bank its task ids and
    every array (two banks with the same tasks match, whatever their names); for another
    source its class and name. Remembered per source object (a bank is hashed once)."""
    cached = _FINGERPRINTS.get(id(source))
    if cached is not None and cached[0] is source:
        return cached[1]
    digest = hashlib.sha256()
    if isinstance(source, TaskBank):
        digest.update(json.dumps(list(source.task_ids)).encode())
        for leaf in jax.tree.leaves(source):
            array = np.asarray(leaf)
            digest.update(f"{array.dtype}{array.shape}".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    else:
        digest.update(f"{type(source).__qualname__}:{source.name}".encode())
    if len(_FINGERPRINTS) > 64:
        _FINGERPRINTS.clear()
    fingerprint = digest.hexdigest()
    _FINGERPRINTS[id(source)] = (source, fingerprint)
    return fingerprint


def _leaf_name(path: tuple) -> str:
    return jax.tree_util.keystr(path)


def _to_numpy(leaf: jax.Array) -> np.ndarray:
    if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(leaf))
    return np.asarray(leaf)


def _header(state: ArcState, config: JaxArcConfig) -> dict:
    source = state.source
    return {
        "format_version": FORMAT_VERSION,
        "batch_shape": list(state.step_count.shape),
        "canvas_shape": list(config.dataset.canvas_shape),
        "selection_format": config.action.selection_format,
        "max_episode_steps": config.environment.max_episode_steps,
        "episode_mode": config.environment.episode_mode,
        "source_name": source.name,
        "num_tasks": source.num_tasks if isinstance(source, TaskBank) else None,
        "source_fingerprint": source_fingerprint(source),
    }


def save_state(path: str | os.PathLike, state: ArcState, config: JaxArcConfig) -> Path:
    """Write ``state`` (without its task source) to ``path`` atomically; returns the path."""
    path = Path(path)
    arrays = {
        _leaf_name(p): _to_numpy(leaf)
        for p, leaf in jax.tree_util.tree_flatten_with_path(state)[0]
        if not _is_derived(_leaf_name(p))
    }
    arrays[_HEADER] = np.asarray(json.dumps(_header(state, config)))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_state(
    path: str | os.PathLike, config: JaxArcConfig, task_data: AbstractTaskSource
) -> ArcState:
    """Read a state saved by :func:`save_state` and re-attach ``task_data`` as its source."""
    path = Path(path)
    source = as_task_source(task_data)
    check_canvas(config, source)
    with np.load(path, allow_pickle=False) as data:
        if _HEADER not in data:
            raise ValueError(f"{path}: not a jaxarc state file (no header)")
        header = json.loads(str(data[_HEADER]))
        expected = _header_fields(config)
        for field, value in expected.items():
            if header.get(field) != value:
                raise ValueError(
                    f"{path}: saved with {field}={header.get(field)!r}, "
                    f"but the config has {field}={value!r}"
                )
        saved_fingerprint = header.get("source_fingerprint")
        if saved_fingerprint is not None and saved_fingerprint != source_fingerprint(source):
            given = source.name
            raise ValueError(
                f"{path} belongs to the source {header.get('source_name')!r}, but the given "
                f"source {given!r} holds other tasks (fingerprint "
                f"{source_fingerprint(source)[:12]} != saved {saved_fingerprint[:12]}); "
                "load it with the source it was saved on"
            )
        if isinstance(source, TaskBank) and header["num_tasks"] not in (None, source.num_tasks):
            raise ValueError(
                f"{path}: saved over a source of {header['num_tasks']} tasks "
                f"({header['source_name']}), but the given bank has {source.num_tasks}"
            )
        template = _template(config, source, tuple(header["batch_shape"]))
        paths_and_leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
        leaves = []
        for leaf_path, like in paths_and_leaves:
            name = _leaf_name(leaf_path)
            if _is_derived(name):
                leaves.append(jnp.zeros(like.shape, like.dtype))  # (replaced below)
                continue
            if name not in data:
                raise ValueError(f"{path}: missing state leaf {name}")
            value = data[name]
            leaves.append(_restore_leaf(path, name, value, like))
    state = jax.tree_util.tree_unflatten(treedef, leaves)
    return _with_episode_pair(state, config, source, len(header["batch_shape"]))


def _is_derived(name: str) -> bool:
    return name == _DERIVED or name.startswith(_DERIVED + ".")


def _with_episode_pair(
    state: ArcState, config: JaxArcConfig, source: AbstractTaskSource, batch_rank: int
) -> ArcState:
    """``state`` with its episode pair read from ``source`` (by task and pair index)."""
    mode = config.environment.episode_mode

    def pair_of(store, task_index, pair_index):
        return source_episode_pair(source, store, task_index, pair_index, mode)

    for _ in range(batch_rank):
        pair_of = jax.vmap(pair_of)
    pair = pair_of(state.episode_store, state.task_index, state.pair_index)
    return eqx.tree_at(lambda s: s.pair, state, pair)


def _header_fields(config: JaxArcConfig) -> dict:
    return {
        "canvas_shape": list(config.dataset.canvas_shape),
        "selection_format": config.action.selection_format,
        "max_episode_steps": config.environment.max_episode_steps,
        "episode_mode": config.environment.episode_mode,
    }


def _template(
    config: JaxArcConfig, source: AbstractTaskSource, batch_shape: tuple[int, ...]
) -> ArcState:
    ref = SourceRef(source)

    def reset(key):
        minus_one = jnp.int32(-1)
        return reset_one(key, config, ref, minus_one, minus_one, RewardParams())[0]

    for _ in batch_shape:
        reset = jax.vmap(reset)
    keys = jax.random.split(jax.random.key(0), int(np.prod(batch_shape)) or 1)
    keys = keys.reshape(batch_shape) if batch_shape else keys[0]
    return jax.eval_shape(reset, keys)


def _restore_leaf(path: Path, name: str, value: np.ndarray, like) -> jax.Array:
    if jnp.issubdtype(like.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(jnp.asarray(value))
    if value.shape != like.shape or value.dtype != like.dtype:
        raise ValueError(
            f"{path}: leaf {name} has {value.dtype}{list(value.shape)}, "
            f"expected {like.dtype}{list(like.shape)}"
        )
    return jnp.asarray(value)
