"""`slmactor evolve ...`: repair rules and fingerprints (`rules`), learned choices (`policy`), the
loop's regression checks and reset (`loop`).
"""
