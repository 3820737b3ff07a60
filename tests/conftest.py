"""Test-wide settings: JAX made strict, and paths to the shared third-party datasets."""

from __future__ import annotations

from pathlib import Path

import jax
import pytest

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
