"""Repository-level pytest settings: modules that must not be imported by doctest collection."""

collect_ignore = ["tapejax/__main__.py", "benchmarks/__main__.py"]
