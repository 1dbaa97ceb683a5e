"""MLIR helpers: the shared context, builders and attribute helpers."""
