"""Atomic training checkpoints: a pytree (equinox leaf serialisation) plus its config as JSON.

Layout under a run's checkpoint root::

    root/update_00000004/state.eqx     # eqx.tree_serialise_leaves of the train state
    root/update_00000004/config.json   # the frozen config (dataclasses.asdict)
    root/update_00000004/meta.json     # update index, sha256 of state.eqx; written last

A checkpoint is first written in full to a hidden temporary directory in ``root`` (files
flushed and fsync'ed) and only then renamed into place with ``os.replace``, so a process
killed during a save leaves every earlier checkpoint untouched; half-written temporary
directories are never listed and are removed by the next save.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import types
import typing
import warnings
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import equinox as eqx
import jax
import numpy as np
from jaxtyping import PyTree

CHECKPOINT_PREFIX = "update_"
STATE_FILE = "state.eqx"
CONFIG_FILE = "config.json"
META_FILE = "meta.json"
_TEMP_PREFIX = ".tmp-"
_TRASH_PREFIX = ".old-"

ConfigT = TypeVar("ConfigT")


class CheckpointError(Exception):
    """A checkpoint is missing, incomplete, corrupt or does not match the expected state."""


class CheckpointWarning(UserWarning):
    """A damaged checkpoint was skipped (resuming falls back to the newest intact one)."""


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: the state (shaped like the ``like`` tree), its config and meta."""

    path: Path
    update_index: int
    state: Any
    config: dict[str, Any]
    meta: dict[str, Any]


# ----------------------------------------------------------------------------- leaves


def _is_key_array(x: Any) -> bool:
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _host_value(x: jax.Array) -> np.ndarray:
    """The value of ``x`` on this host, also for arrays replicated over several processes."""
    if x.is_fully_addressable:
        return np.asarray(jax.device_get(x))
    if not x.is_fully_replicated:
        raise CheckpointError(
            "cannot checkpoint an array that is sharded over several processes "
            f"(shape {x.shape}, sharding {x.sharding}); replicate it first"
        )
    return np.asarray(x.addressable_shards[0].data)


def _serialise_leaf(f: BinaryIO, x: Any) -> None:
    if _is_key_array(x):
        np.save(f, _host_value(jax.random.key_data(x)))
    elif isinstance(x, jax.Array):
        np.save(f, _host_value(x))
    else:
        eqx.default_serialise_filter_spec(f, x)


def _place_like(value: np.ndarray, like: jax.Array) -> jax.Array:
    """``value`` as a global array with the sharding of ``like`` (works across processes)."""
    if value.shape != like.shape or value.dtype != like.dtype:
        raise CheckpointError(
            f"checkpoint leaf has shape {value.shape} dtype {value.dtype}, "
            f"the model expects shape {like.shape} dtype {like.dtype}"
        )
    return jax.make_array_from_callback(like.shape, like.sharding, lambda index: value[index])


def _deserialise_leaf(f: BinaryIO, like: Any) -> Any:
    if _is_key_array(like):
        data = np.load(f)
        key_data_like = jax.random.key_data(like)
        placed = _place_like(data, key_data_like)
        return jax.random.wrap_key_data(placed, impl=jax.random.key_impl(like))
    if isinstance(like, jax.Array):
        return _place_like(np.load(f), like)
    return eqx.default_deserialise_filter_spec(f, like)


# ----------------------------------------------------------------------------- configs


def config_to_dict(config: Any) -> dict[str, Any]:
    """A (nested) frozen dataclass as a JSON-ready dict (tuples become lists)."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"expected a dataclass instance, got {type(config).__name__}")
    return json.loads(json.dumps(dataclasses.asdict(config)))


def _convert(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(value, options[0], where) if len(options) == 1 else value
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, dict):
            raise CheckpointError(f"{where}: expected an object, got {value!r}")
        return config_from_dict(hint, value, where=where)
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list | tuple):
            raise CheckpointError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        return tuple(
            _convert(v, a, f"{where}[{i}]")
            for i, (v, a) in enumerate(zip(value, args, strict=True))
        )
    if hint is float and isinstance(value, int):
        return float(value)
    return value


# Fields renamed since checkpoints were first written: old name -> new name. Configs saved
# under an old name still load (with a DeprecationWarning).
RENAMED_FIELDS: dict[str, str] = {"rollout_steps": "max_episode_steps"}


def config_from_dict(cls: type[ConfigT], data: dict[str, Any], *, where: str = "config") -> ConfigT:
    """Rebuild a (nested) frozen dataclass from :func:`config_to_dict`'s output."""
    renamed = {old: new for old, new in RENAMED_FIELDS.items() if old in data}
    if renamed:
        warnings.warn(
            f"{where}: field(s) saved under old names, read as their new names: {renamed}",
            DeprecationWarning,
            stacklevel=2,
        )
        data = {renamed.get(k, k): v for k, v in data.items()}
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - names)
    if unknown:
        raise CheckpointError(f"{where}: unknown field(s) {unknown} for {cls.__name__}")
    kwargs = {k: _convert(v, hints[k], f"{where}.{k}") for k, v in data.items()}
    return cls(**kwargs)


# ----------------------------------------------------------------------------- files


def _root_cause(err: BaseException) -> BaseException:
    """The innermost cause (equinox wraps leaf errors in errors naming the leaf's path)."""
    while err.__cause__ is not None:
        err = err.__cause__
    return err


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. platforms without directory handles
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path: Path, write: Any) -> None:
    with open(path, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a flushed temporary file and ``os.replace``: a
    crash or a full disk leaves the previous file whole."""
    path = Path(path)
    temp = path.with_name(f"{_TEMP_PREFIX}{path.name}-{os.getpid()}")
    try:
        _write_file(temp, lambda f: f.write(text.encode()))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checkpoint_name(update_index: int) -> str:
    return f"{CHECKPOINT_PREFIX}{update_index:08d}"


def list_checkpoints(root: str | Path) -> list[Path]:
    """Complete checkpoints in ``root``, oldest first (temporary directories are skipped)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        suffix = entry.name.removeprefix(CHECKPOINT_PREFIX)
        complete = entry.is_dir() and (entry / META_FILE).is_file()
        if complete and suffix != entry.name and suffix.isdigit():
            found.append((int(suffix), entry))
    return [path for _, path in sorted(found)]


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete checkpoint in ``root``, or None."""
    found = list_checkpoints(root)
    return found[-1] if found else None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise CheckpointError(f"{path} is damaged ({type(err).__name__}: {err})") from None


def verify_checkpoint(path: str | Path) -> dict[str, Any]:
    """The meta of the checkpoint ``path`` after checking it is complete and undamaged: all
    files present, ``meta.json`` and ``config.json`` parse, ``state.eqx`` has the SHA-256
    stored in ``meta.json``. Raises :class:`CheckpointError` naming the damage."""
    path = Path(path)
    meta_path, state_path, config_path = path / META_FILE, path / STATE_FILE, path / CONFIG_FILE
    for required in (meta_path, state_path, config_path):
        if not required.is_file():
            raise CheckpointError(f"{path} is not a complete checkpoint: {required.name} missing")
    meta = _read_json(meta_path)
    if not isinstance(meta, dict) or not isinstance(meta.get("update_index"), int):
        raise CheckpointError(f"{meta_path} is damaged (no update_index)")
    if _sha256(state_path) != meta.get("state_sha256"):
        raise CheckpointError(f"{state_path} is corrupted (sha256 does not match meta.json)")
    if not isinstance(_read_json(config_path), dict):
        raise CheckpointError(f"{config_path} is damaged (not a JSON object)")
    return meta


def latest_intact_checkpoint(root: str | Path) -> Path | None:
    """The newest checkpoint in ``root`` that passes :func:`verify_checkpoint`, or None.

    Each newer damaged checkpoint is skipped with a :class:`CheckpointWarning` (it stays on
    disk for inspection; the next save of its update replaces it).
    """
    for path in reversed(list_checkpoints(root)):
        try:
            verify_checkpoint(path)
        except CheckpointError as err:
            warnings.warn(
                f"skipping damaged checkpoint {path}: {err}; falling back to an older one",
                CheckpointWarning,
                stacklevel=2,
            )
            continue
        return path
    return None


def _remove_stale_temporaries(root: Path) -> None:
    for entry in root.iterdir():
        if entry.is_dir() and entry.name.startswith((_TEMP_PREFIX, _TRASH_PREFIX)):
            shutil.rmtree(entry, ignore_errors=True)


def save_checkpoint(
    root: str | Path,
    update_index: int,
    state: PyTree,
    config: Any,
    *,
    keep: int | None = None,
    extra_meta: dict[str, Any] | None = None,
) -> Path:
    """Write ``state`` and ``config`` atomically as ``root/update_XXXXXXXX``; returns its path.

    ``keep``: if given, only the newest ``keep`` checkpoints are kept afterwards.
    """
    if keep is not None and keep < 1:
        raise ValueError(f"keep must be >= 1 or None, got {keep}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(root)
    final = root / checkpoint_name(update_index)
    temp = root / f"{_TEMP_PREFIX}{final.name}-{os.getpid()}"
    temp.mkdir()
    try:
        state_path = temp / STATE_FILE
        _write_file(state_path, lambda f: eqx.tree_serialise_leaves(f, state, _serialise_leaf))
        config_json = json.dumps(config_to_dict(config), indent=2, sort_keys=True)
        _write_file(temp / CONFIG_FILE, lambda f: f.write(config_json.encode()))
        meta = {
            "update_index": int(update_index),
            "state_sha256": _sha256(state_path),
            "jax_version": jax.__version__,
            **(extra_meta or {}),
        }
        meta_json = json.dumps(meta, indent=2, sort_keys=True)
        _write_file(temp / META_FILE, lambda f: f.write(meta_json.encode()))
        _fsync_dir(temp)
        if final.exists():  # re-saving the same update (e.g. after a resume): swap it out
            trash = root / f"{_TRASH_PREFIX}{final.name}-{os.getpid()}"
            os.replace(final, trash)
            os.replace(temp, final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(temp, final)
        _fsync_dir(root)
    except BaseException as err:
        shutil.rmtree(temp, ignore_errors=True)
        if not isinstance(err, Exception):  # KeyboardInterrupt, SystemExit
            raise
        cause = _root_cause(err)
        raise CheckpointError(
            f"writing checkpoint {final} failed ({type(cause).__name__}: {cause}); "
            "earlier checkpoints are untouched"
        ) from err
    if keep is not None:
        for old in list_checkpoints(root)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    return final


def load_checkpoint(path: str | Path, like: PyTree) -> Checkpoint:
    """Load the checkpoint directory ``path`` into a tree with the structure of ``like``.

    Arrays are placed with the shardings of ``like``'s arrays (so a state replicated over a
    mesh is restored replicated). Raises :class:`CheckpointError` on a missing, incomplete
    or corrupted checkpoint.
    """
    path = Path(path)
    meta = verify_checkpoint(path)
    state_path, config_path = path / STATE_FILE, path / CONFIG_FILE
    try:
        state = eqx.tree_deserialise_leaves(state_path, like, _deserialise_leaf)
    except Exception as err:  # structure mismatch, truncated file, ...
        cause = " ".join(str(_root_cause(err)).split())  # one line
        raise CheckpointError(f"cannot load {state_path} into the model: {cause}") from err
    config = _read_json(config_path)
    return Checkpoint(path, int(meta["update_index"]), state, config, meta)
