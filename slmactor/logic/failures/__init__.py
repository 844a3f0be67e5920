"""The failure pipeline: a tool error's text is normalized (`normalize`), classified (`classify`),
diagnosed down to its salient line (`diagnose`) and turned into a stable fingerprint
(`fingerprint`); `fingerprint_seed` keeps the seed's algorithm for comparison.

May import: text.
"""
