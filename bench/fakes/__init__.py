"""Test doubles the benchmarks and tests run against: fake upstreams, fake judges, tiny models."""
