"""How long JAX spends making programs (tracing, lowering, compiling) while a block runs, so
that a benchmark can report its run time with compile time excluded and reported beside it.

    with CompileClock() as clock:
        run_everything()
    run_seconds = wall_seconds - clock.seconds

The clock adds up JAX's own duration events (:mod:`jax.monitoring`, through one listener
registered when the first clock starts) for as long as the block runs. A program loaded
from the persistent compilation cache adds its tracing and lowering but no compile; a
program already compiled in this process adds nothing.
"""

from __future__ import annotations

import dataclasses
import threading

import jax

# The duration events JAX records for each program it makes: trace the Python function to a
# jaxpr, lower the jaxpr to an MLIR module, and compile the module with XLA.
COMPILE_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
}


@dataclasses.dataclass
class CompileClock:
    """Seconds spent tracing, lowering and compiling while the ``with`` block runs, by stage;
    ``programs`` counts XLA compilations (cache loads excluded)."""

    trace: float = 0.0
    lower: float = 0.0
    compile: float = 0.0
    programs: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    @property
    def seconds(self) -> float:
        """All three stages together."""
        return self.trace + self.lower + self.compile

    def speed(
        self, wall_seconds: float, tasks: int, env_steps: int | None = None
    ) -> dict[str, float | int]:
        """A run's speed with the time spent making programs excluded and reported beside
        it: ``compile_seconds``, ``programs_compiled``, ``seconds_per_task`` and, given the
        run's ``env_steps``, ``env_steps_per_second``."""
        running = max(wall_seconds - self.seconds, 1e-9)
        speed: dict[str, float | int] = {
            "compile_seconds": round(self.seconds, 1),
            "programs_compiled": self.programs,
            "seconds_per_task": round(running / max(tasks, 1), 3),
        }
        if env_steps:
            speed["env_steps_per_second"] = round(env_steps / running)
        return speed

    def _listen(self, event: str, duration: float) -> None:
        stage = COMPILE_EVENTS[event]
        with self._lock:
            setattr(self, stage, getattr(self, stage) + duration)
            self.programs += stage == "compile"

    def __enter__(self) -> CompileClock:
        global _listening
        with _RUNNING_LOCK:
            if not _listening:
                jax.monitoring.register_event_duration_secs_listener(_to_running_clocks)
                _listening = True
            _RUNNING.append(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        with _RUNNING_LOCK:
            _RUNNING.remove(self)


# The clocks now running, fed by one process-wide listener (registered once: JAX 0.6 has no
# public way to unregister one).
_RUNNING: list[CompileClock] = []
_RUNNING_LOCK = threading.Lock()
_listening = False


def _to_running_clocks(event: str, duration: float, **_: object) -> None:
    if event in COMPILE_EVENTS:
        for clock in tuple(_RUNNING):
            clock._listen(event, duration)
