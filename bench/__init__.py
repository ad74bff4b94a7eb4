"""Benchmarks and the fake upstream they run against; each benchmark prints one JSON line."""
