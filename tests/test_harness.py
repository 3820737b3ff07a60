"""The suite's own settings (tests/conftest.py), as a process that loads them sees them: its
throw-away directories are gone when it exits, and the programs of the subprocesses it starts
compile with XLA's backend optimisation off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _run_with_conftest(code: str) -> list[str]:
    """Lines printed by ``code`` run in a fresh interpreter after ``import conftest`` (as a test
    process of a new run: no run-wide cache inherited)."""
    env = {k: v for k, v in os.environ.items() if k != "JAXARC_TEST_RUN_XLA_CACHE"}
    env.pop("JAX_DISABLE_MOST_OPTIMIZATIONS", None)
    result = subprocess.run(
        [sys.executable, "-c", f"import conftest\n{code}"],
        cwd=TESTS,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.split()


def test_a_test_process_removes_its_throw_away_directories_when_it_exits():
    code = (
        "import os\n"
        "for name in ('JAXARC_CACHE_DIR', 'JAXARC_TEST_RUN_XLA_CACHE'):\n"
        "    assert os.path.isdir(os.environ[name]), name\n"
        "    print(os.environ[name])\n"
    )
    directories = _run_with_conftest(code)
    assert len(directories) == 2
    for directory in directories:
        assert not Path(directory).exists(), directory


def test_subprocesses_of_a_test_compile_with_the_backend_optimisation_off():
    code = (
        "import subprocess, sys\n"
        "child = 'from jax._src import compiler as c; print(c._DISABLE_MOST_OPTIMIZATIONS.value)'\n"
        "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True,"
        " check=True).stdout)\n"
    )
    assert _run_with_conftest(code) == ["True"]
