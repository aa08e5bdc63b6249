"""tapejax's benchmarks: `python -m benchmarks` (see README's table)."""
