"""Benchmarks: each module measures a path of slmactor next to a floor measured in the same run."""
