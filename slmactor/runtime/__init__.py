"""Actor machinery: actor base, supervisor, front door, daemon. Knows nothing about memory itself."""
