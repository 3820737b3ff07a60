"""The runtime flags ``jaxarc train``, ``jaxarc eval`` and ``jaxarc solve`` share: the
persistent XLA compilation cache and the multi-process (``jax.distributed``) set-up. None
changes a result.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jaxarc.cli.main import CLIError


def default_compile_cache_dir() -> Path:
    """``xla-compilation-cache`` under the jaxarc cache (``$JAXARC_CACHE_DIR`` or the user's)."""
    from jaxarc.data.cache import cache_root

    return cache_root() / "xla-compilation-cache"


def add_runtime_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("runtime (no effect on the results)")
    group.add_argument(
        "--compile-cache-dir",
        type=Path,
        default=None,
        help=f"persistent XLA compilation cache (default: {default_compile_cache_dir()})",
    )
    group.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not read or write the persistent compilation cache",
    )
    dist = parser.add_argument_group("multi-process (jax.distributed)")
    dist.add_argument("--coordinator-address", metavar="HOST:PORT", default=None)
    dist.add_argument("--num-processes", type=int, metavar="N", default=None)
    dist.add_argument("--process-id", type=int, metavar="I", default=None)


def _distributed_config(args: argparse.Namespace) -> Any:
    from jaxarc.agents.run.distributed import DistributedConfig

    try:
        return DistributedConfig(args.coordinator_address, args.num_processes, args.process_id)
    except ValueError as err:
        raise CLIError(str(err)) from None


def join_distributed(args: argparse.Namespace) -> bool:
    """Join the distributed run (before any JAX work); returns "am I primary"."""
    from jaxarc.agents.run.distributed import initialize_distributed, is_primary_process

    initialize_distributed(_distributed_config(args))
    return is_primary_process()


def _compile_cache_dir(args: argparse.Namespace) -> Path | None:
    """Where compiled programs persist (``None`` with ``--no-compile-cache``)."""
    if args.no_compile_cache:
        return None
    return args.compile_cache_dir or default_compile_cache_dir()


def enable_compile_cache_from_args(args: argparse.Namespace) -> None:
    from jaxarc.agents.run.distributed import enable_compile_cache

    directory = _compile_cache_dir(args)
    if directory is not None:
        enable_compile_cache(directory)


def prepare_runtime(args: argparse.Namespace) -> bool:
    """Join the distributed run and switch on the compile cache; returns "am I primary".
    (Every flag is read here before the runtime starts below the CLI.)"""
    from jaxarc.agents.run.distributed import start_process

    config, cache = _distributed_config(args), _compile_cache_dir(args)
    return start_process(config, cache)
