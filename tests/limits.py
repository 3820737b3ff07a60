"""How long a test waits for a subprocess it starts, and the XLA flags of every test process.

A guard against a hang, not a speed check: the suite also runs on a shared 2-core machine
under heavy load, where a subprocess that compiles for 30 s on an idle machine can take 10 to
30 times as long.
"""

SUBPROCESS_TIMEOUT_S = 3600

# XLA:CPU's fusion emitters (on by default in jaxlib 0.10) double the time the agents'
# programs take to compile (a small GRPO update: 23 s with them, 12 s without), and tests
# compare what programs compute, not how fast they run: tests/conftest.py turns them off for
# the test processes and, through the environment, every subprocess a test starts.
XLA_TEST_FLAGS = "--xla_cpu_use_fusion_emitters=false"
