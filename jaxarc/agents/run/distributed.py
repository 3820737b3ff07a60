"""Devices and processes: the 1-D ``data`` mesh and JAX's multi-process runtime.

The trainer has one code path for one CPU, several local devices and several machines:
the task axis of the rollout batch is sharded over a 1-D mesh of *all global* devices (axis
``data``) and parameters are replicated. With several processes each one runs the same
program; :func:`initialize_distributed` (``jax.distributed.initialize``) must run before
anything else touches JAX, and only the primary process (index 0) logs and checkpoints.
:func:`key_value_store` gives the run's key-value store (``jaxarc solve`` passes its processes'
tasks through it).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"
_STORE_METHODS = ("key_value_set", "blocking_key_value_get", "key_value_try_get")
_ADDRESS = re.compile(r"^(?P<host>[^\s:]+|\[[0-9a-fA-F:]+\]):(?P<port>\d{1,5})$")


@dataclasses.dataclass(frozen=True)
class DistributedConfig:
    """How this process joins a multi-process run (all three set, or none)."""

    coordinator_address: str | None = None
    num_processes: int | None = None
    process_id: int | None = None

    def __post_init__(self) -> None:
        given = [
            v is not None for v in (self.coordinator_address, self.num_processes, self.process_id)
        ]
        if any(given) and not all(given):
            raise ValueError(
                "a multi-process run needs all of --coordinator-address, --num-processes "
                "and --process-id"
            )
        if self.coordinator_address is not None:
            match = _ADDRESS.match(self.coordinator_address)
            if match is None or not 0 < int(match["port"]) < 65536:
                raise ValueError(
                    f"coordinator address must be HOST:PORT, got {self.coordinator_address!r}"
                )
        if self.num_processes is not None and self.num_processes < 1:
            raise ValueError(f"--num-processes must be 1 or more, got {self.num_processes}")
        if self.process_id is not None and not 0 <= self.process_id < (self.num_processes or 0):
            raise ValueError(
                f"--process-id must be in [0, {self.num_processes}) for --num-processes "
                f"{self.num_processes}, got {self.process_id}"
            )

    @property
    def enabled(self) -> bool:
        return self.coordinator_address is not None


def initialize_distributed(config: DistributedConfig, *, cpu_collectives: str = "gloo") -> bool:
    """Join the multi-process run described by ``config``; returns whether it did.

    Must run before any JAX computation. On CPU the cross-process collectives use
    ``cpu_collectives`` (gloo by default).
    """
    if not config.enabled:
        return False
    jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    jax.distributed.initialize(
        coordinator_address=config.coordinator_address,
        num_processes=config.num_processes,
        process_id=config.process_id,
    )
    return True


def start_process(config: DistributedConfig, compile_cache: Path | None = None) -> bool:
    """Join the run ``config`` describes (before any JAX work), then persist compiled XLA
    programs in ``compile_cache`` (``None``: not at all) so that later runs skip compiling;
    returns whether this process is the primary one."""
    initialize_distributed(config)
    if compile_cache is not None:
        enable_compile_cache(compile_cache)
    return is_primary_process()


def enable_compile_cache(directory: Path) -> None:
    """Persist compiled XLA programs in ``directory`` so later runs skip compilation."""
    directory.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def is_primary_process() -> bool:
    """True on the process that logs and writes checkpoints (index 0)."""
    return jax.process_index() == 0


def make_data_mesh(devices: list[jax.Device] | None = None) -> Mesh:
    """A 1-D mesh with axis ``data`` over ``devices`` (default: all global devices)."""
    devices = jax.devices() if devices is None else devices
    return Mesh(np.asarray(devices), (DATA_AXIS,))


def replicated(mesh: Mesh) -> NamedSharding:
    """The sharding of parameters and optimiser state: a full copy on every device."""
    return NamedSharding(mesh, PartitionSpec())


def key_value_store() -> Any:
    """The key-value store of the multi-process run this process joined (the client of
    ``jax.distributed``'s coordination service: ``key_value_set``,
    ``blocking_key_value_get``, ``key_value_try_get``). A :class:`RuntimeError` in one line
    when no run was joined or this jax offers no such store. (The one place jaxarc reaches
    into jax's private ``jax._src.distributed``.)"""
    try:
        from jax._src.distributed import global_state
    except ImportError:
        raise RuntimeError(
            f"jax {jax.__version__} has no jax._src.distributed: processes cannot pass tasks"
        ) from None
    client = getattr(global_state, "client", None)
    if client is None:
        raise RuntimeError("no multi-process run was joined (jax.distributed.initialize)")
    missing = [name for name in _STORE_METHODS if not hasattr(client, name)]
    if missing:
        raise RuntimeError(
            f"jax {jax.__version__}'s distributed client has no {', '.join(missing)}: "
            "processes cannot pass tasks"
        )
    return client
