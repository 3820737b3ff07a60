"""Test-wide settings: JAX made strict, XLA's backend optimisation off, a compilation cache
shared by the whole run, compiled programs dropped at each module's end, and paths to the
shared third-party datasets."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from limits import XLA_TEST_FLAGS

# XLA:CPU's fusion emitters off (limits.py says why), set before JAX makes its CPU client
os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {XLA_TEST_FLAGS}".strip()

import jax  # noqa: E402
import pytest  # noqa: E402
from jax._src import lru_cache  # noqa: E402

# Tests never touch the user's real cache: parsed banks and fetched datasets go to a
# throw-away directory for this test process, removed when it exits.
os.environ["JAXARC_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxarc-test-cache-")
atexit.register(shutil.rmtree, os.environ["JAXARC_CACHE_DIR"], ignore_errors=True)

# Tests compare what compiled programs compute, not how fast they run, and most of the suite's
# time is XLA compiling: XLA's backend optimisation is off (LLVM at -O0, no expensive passes),
# which cuts compile times by about 40%. Through the environment, every subprocess a test
# starts (examples, README commands, trainers) compiles the same way.
os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
jax.config.update("jax_disable_most_optimizations", True)

# One persistent compilation cache for the whole run (JAXARC_TEST_SHARED_XLA_CACHE=0 turns it
# off): made by the first process (pytest itself) and inherited through the environment by the
# xdist workers and by every subprocess a test starts (examples, README commands), so a
# program compiled once in the run, by any function object, is loaded, not compiled again. A
# test that checks the cache itself gives its run its own directory (`jaxarc train
# --compile-cache-dir`); the trainer subprocesses of the sharding tests opt out
# (test_agents_sharding.SUBPROCESS_ENV).
RUN_CACHE_ENV = "JAXARC_TEST_RUN_XLA_CACHE"
SHARED_CACHE = os.environ.get("JAXARC_TEST_SHARED_XLA_CACHE", "1") != "0"
if SHARED_CACHE and RUN_CACHE_ENV not in os.environ:
    os.environ[RUN_CACHE_ENV] = tempfile.mkdtemp(prefix="jaxarc-test-xla-cache-")
    atexit.register(shutil.rmtree, os.environ[RUN_CACHE_ENV], ignore_errors=True)
if SHARED_CACHE:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ[RUN_CACHE_ENV]
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"  # every program
    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def _put_atomically(self, key: str, value: bytes) -> None:
    """JAX writes an entry in place, so a process reading it at that moment reads half a file
    (a warning, then a recompile): here the entry appears whole, by a rename."""
    path = self.path / f"{key}{lru_cache._CACHE_SUFFIX}"
    if key and not path.exists():
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_bytes(value)
        os.replace(partial, path)


if (
    SHARED_CACHE
    and getattr(lru_cache, "_CACHE_SUFFIX", None)
    and hasattr(lru_cache.LRUCache, "put")
):
    lru_cache.LRUCache.put = _put_atomically  # (the run's cache has no size limit to keep)


@pytest.fixture(autouse=True)
def _compile_cache_stays_as_the_run_set_it():
    """``jaxarc train`` / ``eval`` called in-process (``main([...])``) switch on the persistent
    compilation cache for the whole process; afterwards the worker would write every program
    it compiles to disk for the rest of the run (slower, and XLA:CPU's executable
    serialisation has crashed a worker). Each test leaves the cache as it found it."""
    from jax._src import compilation_cache

    directory = jax.config.jax_compilation_cache_dir
    min_seconds = jax.config.jax_persistent_cache_min_compile_time_secs
    yield
    if jax.config.jax_compilation_cache_dir != directory:
        jax.config.update("jax_compilation_cache_dir", directory)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", min_seconds)
        compilation_cache.reset_cache()


# Every program XLA:CPU compiles stays mapped into the process (~18 memory maps each) until
# JAX drops it; a test worker that runs half the suite would pass Linux's limit of 65,530 maps
# (vm.max_map_count) after ~3,600 live programs, and the next compilation then dies with a
# segmentation fault inside XLA. So each worker drops its compiled programs when it leaves a
# test module (a module's fixtures still share theirs), and sooner if a module alone nears
# the limit.
MAX_MEMORY_MAPS = 40_000


def _memory_maps() -> int:
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:  # not Linux: no such limit to watch
        return 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield  # the test's fixtures (and, at a module's end, the module's) are finalized first
    leaving_module = nextitem is None or nextitem.path != item.path
    if leaving_module or _memory_maps() > MAX_MEMORY_MAPS:
        import gc

        jax.clear_caches()
        gc.collect()


# Strict JAX in tests: no implicit rank promotion, no silent dtype promotion.
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules that hold a ``slow`` test run first (each module's tests stay together and
    in order): with ``-n 2`` the long modules start early instead of leaving one worker busy
    at the end while the other waits."""
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)


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


@pytest.fixture
def count_compilations():
    """``with count_compilations() as clock: ...; clock.programs``: the XLA compilations
    inside the block (a :class:`~jaxarc.benchmarking.compile_clock.CompileClock`)."""
    from jaxarc.benchmarking.compile_clock import CompileClock

    return CompileClock
