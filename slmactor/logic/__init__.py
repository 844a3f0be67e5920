"""Pure logic: no I/O, no async, no imports from the rest of slmactor; time and randomness come in as arguments."""
