"""Text primitives every domain shares: byte-exact clipping and hashing (`strings`), RFC 3339 time
formats (`timefmt`), language and model-family names (`models`), and secret redaction (`redact`).

Imports no other domain: everything else may import this one.
"""
