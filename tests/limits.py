"""How long a test waits for a subprocess it starts.

A guard against a hang, not a speed check: the suite also runs on a shared 2-core machine
under heavy load, where a subprocess that compiles for 30 s on an idle machine can take 10 to
30 times as long.
"""

SUBPROCESS_TIMEOUT_S = 3600
