"""Compiled Cython kernels for semi_core (optional; see ``semi_core.kernels``)."""
