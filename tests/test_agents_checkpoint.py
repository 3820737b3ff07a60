"""Checkpoints: exact round trip, atomic saves that survive a crash, configs as JSON."""

from __future__ import annotations

import dataclasses
import json
import os
import textwrap
from pathlib import Path
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from limits import run_python_script

from jaxarc.agents.run.checkpoint import (
    CheckpointError,
    CheckpointWarning,
    config_from_dict,
    config_to_dict,
    latest_checkpoint,
    latest_intact_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)


@dataclasses.dataclass(frozen=True)
class _Inner:
    width: int = 8
    allowed: tuple[int, ...] | None = None


@dataclasses.dataclass(frozen=True)
class _Config:
    lr: float = 1e-3
    mode: Literal["group", "none"] = "group"
    inner: _Inner = _Inner()


class _State(eqx.Module):
    model: eqx.nn.MLP
    opt_state: optax.OptState
    key: jax.Array
    update_index: jax.Array


def _make_state(seed: int) -> tuple[_State, optax.GradientTransformation]:
    key = jax.random.key(seed)
    model = eqx.nn.MLP(3, 2, 8, 2, key=key)
    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))
    return _State(model, opt_state, jax.random.key(seed + 100), jnp.int32(0)), optimizer


@eqx.filter_jit
def _train_one(state: _State, optimizer: optax.GradientTransformation) -> _State:
    key, data_key = jax.random.split(state.key)
    x = jax.random.normal(data_key, (3,))

    def loss(model: eqx.nn.MLP) -> jax.Array:
        return jnp.sum(model(x) ** 2)

    grads = eqx.filter_grad(loss)(state.model)
    with jax.numpy_dtype_promotion("standard"):  # optax's Adam mixes int and float
        updates, opt_state = optimizer.update(grads, state.opt_state, state.model)
    model = eqx.apply_updates(state.model, updates)
    return _State(model, opt_state, key, state.update_index + 1)


def _leaves_equal(a: object, b: object) -> bool:
    def data(x: object) -> object:
        if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return jax.random.key_data(x)
        return x

    la = [np.asarray(data(x)) for x in jax.tree.leaves(eqx.filter(a, eqx.is_array))]
    lb = [np.asarray(data(x)) for x in jax.tree.leaves(eqx.filter(b, eqx.is_array))]
    return len(la) == len(lb) and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(la, lb, strict=True)
    )


def test_round_trip_then_training_continues_identically(tmp_path: Path) -> None:
    state, optimizer = _make_state(0)
    for _ in range(3):
        state = _train_one(state, optimizer)
    path = save_checkpoint(tmp_path, 3, state, _Config())
    like, _ = _make_state(7)  # different values, same structure
    loaded = load_checkpoint(path, like)
    assert loaded.update_index == 3
    assert _leaves_equal(loaded.state, state)
    assert not _leaves_equal(like, state)
    # the PRNG key and optimiser moments came back: the next updates are bit-identical
    continued, resumed = state, loaded.state
    for _ in range(2):
        continued, resumed = _train_one(continued, optimizer), _train_one(resumed, optimizer)
    assert _leaves_equal(continued, resumed)


def test_config_saved_as_json_and_rebuilt(tmp_path: Path) -> None:
    config = _Config(lr=0.5, mode="none", inner=_Inner(width=4, allowed=(1, 2, 34)))
    state, _ = _make_state(0)
    path = save_checkpoint(tmp_path, 1, state, config)
    on_disk = json.loads((path / "config.json").read_text())
    assert on_disk == {"lr": 0.5, "mode": "none", "inner": {"width": 4, "allowed": [1, 2, 34]}}
    assert config_from_dict(_Config, on_disk) == config
    assert config_from_dict(_Config, config_to_dict(_Config())) == _Config()
    with pytest.raises(CheckpointError, match=r"unknown field\(s\) \['typo'\]"):
        config_from_dict(_Config, {**on_disk, "typo": 1})


def test_latest_keep_and_overwrite(tmp_path: Path) -> None:
    state, _ = _make_state(0)
    for update in (2, 4, 6):
        save_checkpoint(tmp_path, update, state, _Config(), keep=2)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["update_00000004", "update_00000006"]
    changed = eqx.tree_at(lambda s: s.update_index, state, jnp.int32(9))
    save_checkpoint(tmp_path, 6, changed, _Config())  # re-saving replaces it atomically
    latest = latest_checkpoint(tmp_path)
    assert latest is not None and latest.name == "update_00000006"
    assert int(load_checkpoint(latest, state).state.update_index) == 9


def test_failing_write_keeps_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, optimizer = _make_state(0)
    save_checkpoint(tmp_path, 1, state, _Config())
    newer = _train_one(state, optimizer)
    real_save = np.save
    calls = []

    def failing_save(f, array, *args, **kwargs):  # the disk fills up on the third array
        calls.append(1)
        if len(calls) == 3:
            f.write(b"\x93NUMPY partial")
            raise OSError(28, "No space left on device")
        real_save(f, array, *args, **kwargs)

    monkeypatch.setattr(np, "save", failing_save)
    with pytest.raises(CheckpointError, match="OSError.*No space left.*earlier checkpoints"):
        save_checkpoint(tmp_path, 2, newer, _Config())
    monkeypatch.setattr(np, "save", real_save)
    assert len(calls) == 3
    assert sorted(os.listdir(tmp_path)) == ["update_00000001"]  # temporary removed
    latest = latest_checkpoint(tmp_path)
    assert latest is not None and latest.name == "update_00000001"
    assert _leaves_equal(load_checkpoint(latest, state).state, state)


def test_process_killed_during_save_loses_nothing_saved_before(tmp_path: Path) -> None:
    # A real crash: the child process SIGKILLs itself in the middle of writing the second
    # checkpoint's state file, after some bytes reached the disk.
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_agents_checkpoint import _Config, _make_state, _train_one
        from jaxarc.agents.run.checkpoint import save_checkpoint
        state, optimizer = _make_state(0)
        save_checkpoint({str(tmp_path)!r}, 1, state, _Config())
        real_save = np.save
        def dying_save(f, array, *args, **kwargs):
            real_save(f, array, *args, **kwargs)
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        np.save = dying_save
        save_checkpoint({str(tmp_path)!r}, 2, _train_one(state, optimizer), _Config())
        print("not reached")
        """
    )
    result = run_python_script(script)
    assert result.returncode == -9, result.stderr
    leftovers = sorted(os.listdir(tmp_path))
    assert any(name.startswith(".tmp-update_00000002") for name in leftovers), leftovers
    assert [p.name for p in list_checkpoints(tmp_path)] == ["update_00000001"]
    state, _ = _make_state(0)
    assert _leaves_equal(load_checkpoint(latest_checkpoint(tmp_path), state).state, state)
    save_checkpoint(tmp_path, 2, state, _Config())  # the next save cleans up the debris
    assert sorted(os.listdir(tmp_path)) == ["update_00000001", "update_00000002"]


def test_corrupted_or_mismatched_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    state, _ = _make_state(0)
    path = save_checkpoint(tmp_path, 1, state, _Config())
    other = eqx.nn.MLP(3, 2, 16, 2, key=jax.random.key(0))
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(path, other)
    with open(path / "state.eqx", "r+b") as f:
        f.seek(200)
        f.write(b"\x00\x01\x02")
    with pytest.raises(CheckpointError, match="corrupted"):
        load_checkpoint(path, state)
    (path / "config.json").unlink()
    with pytest.raises(CheckpointError, match="config.json missing"):
        load_checkpoint(path, state)


@pytest.mark.parametrize("damage", ["truncate_state", "truncate_meta", "garble_config"])
def test_resume_falls_back_to_the_newest_intact_checkpoint(tmp_path: Path, damage: str) -> None:
    state, optimizer = _make_state(0)
    states = {}
    for update in (1, 2, 3):
        state = _train_one(state, optimizer)
        states[update] = state
        save_checkpoint(tmp_path, update, state, _Config())
    newest = tmp_path / "update_00000003"
    if damage == "truncate_state":
        os.truncate(newest / "state.eqx", 100)
    elif damage == "truncate_meta":
        os.truncate(newest / "meta.json", 10)
    else:
        (newest / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="update_00000003"):
        verify_checkpoint(newest)
    verify_checkpoint(tmp_path / "update_00000002")  # intact: no error
    with pytest.warns(CheckpointWarning, match=r"update_00000003.*falling back"):
        intact = latest_intact_checkpoint(tmp_path)
    assert intact is not None and intact.name == "update_00000002"
    assert _leaves_equal(load_checkpoint(intact, state).state, states[2])
    with pytest.raises(CheckpointError, match="update_00000003"):
        load_checkpoint(newest, state)  # also never a raw JSON/EOF error
