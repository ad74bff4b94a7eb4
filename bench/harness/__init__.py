"""What the benchmarks use to drive processes: the load generator, server helpers."""
