"""Benchmarks: ``python -m benchmarks`` runs every bench_*.py (see __main__.py)."""
