"""How long a test waits for a subprocess it starts, a Python script run as one, and the XLA
flags of every test process.

A guard against a hang, not a speed check: the suite also runs on a shared 2-core machine
under heavy load, where a subprocess that compiles for 30 s on an idle machine can take 10 to
30 times as long.
"""

import subprocess
import sys
from pathlib import Path

SUBPROCESS_TIMEOUT_S = 3600
REPO_ROOT = Path(__file__).resolve().parents[1]


def run_python_script(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by this interpreter in a process of its own, from the repository root
    (output captured as text; e.g. a crash at a chosen point, seen by its return code)."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )


# XLA:CPU's fusion emitters (on by default in jaxlib 0.10) double the time the agents'
# programs take to compile (a small GRPO update: 23 s with them, 12 s without), and tests
# compare what programs compute, not how fast they run: tests/conftest.py turns them off for
# the test processes and, through the environment, every subprocess a test starts.
XLA_TEST_FLAGS = "--xla_cpu_use_fusion_emitters=false"
