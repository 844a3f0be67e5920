"""slmactor: short- and long-term memory and a self-improvement loop for coding-agent harnesses."""

__version__ = "0.1.0"
