"""jaxarc: JAX-native reinforcement-learning environments for ARC grid puzzles."""

__version__ = "0.1.0"
