"""Benchmarks shipped with the package (``jaxarc bench ...``)."""
