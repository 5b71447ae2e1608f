"""iclr25: ICLR 2025 papers as measured command-line research tools.

Importing this package is cheap on purpose: torch, transformers and cupy are imported
inside the commands that need them, never here.
"""

__version__ = "0.1.0"
