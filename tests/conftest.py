"""Test-wide settings: JAX made strict, and paths to the shared third-party datasets."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import jax
import pytest

# Tests never touch the user's real cache: parsed banks, fetched datasets and compilation
# caches go to a throw-away directory for this test process.
os.environ["JAXARC_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxarc-test-cache-")

# Strict JAX in tests: no implicit rank promotion, no silent dtype promotion.
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def conceptarc_dir() -> Path:
    path = SHARED_DATASETS / "conceptarc"
    if not path.is_dir():
        pytest.skip("../shared/datasets/conceptarc is absent")
    return path


@pytest.fixture(scope="session")
def miniarc_dir() -> Path:
    path = SHARED_DATASETS / "miniarc"
    if not path.is_dir():
        pytest.skip("../shared/datasets/miniarc is absent")
    return path


class CompilationCounter:
    """Counts XLA backend compilations while active (via jax.monitoring events)."""

    EVENT = "/jax/core/compile/backend_compile_duration"

    def __init__(self) -> None:
        self.count = 0
        self.active = False

    def listener(self, event: str, duration: float, **kwargs: object) -> None:
        if self.active and event == self.EVENT:
            self.count += 1


_COUNTER = CompilationCounter()
jax.monitoring.register_event_duration_secs_listener(_COUNTER.listener)


@pytest.fixture
def count_compilations():
    """Context manager factory: ``with count_compilations() as counter: ...; counter.count``."""
    import contextlib

    @contextlib.contextmanager
    def counting():
        _COUNTER.count = 0
        _COUNTER.active = True
        try:
            yield _COUNTER
        finally:
            _COUNTER.active = False

    return counting
