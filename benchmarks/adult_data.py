"""Kept for scripts written before :mod:`benchmark_data`, the one data loader: import from there."""

from benchmark_data import load_adult  # noqa: F401
