"""Repairs: the deterministic argument transforms (`transforms`, `repair_json`), the table of
repair candidates (`repairs`), the learned and seeded repair rules keyed by failure fingerprints
(`rules`, `rule_seeds`).

May import: text, failures.
"""
