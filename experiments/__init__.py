"""Benchmarks and sweeps; they use the public API only."""
