"""MLIR helpers: the shared context, builders, attribute helpers, safe rewriting and diagnostics.

``erase_op`` is re-exported here because it is the one way a pass should
erase an op (it refuses while the op's results are used).
"""

from toolkit.ir.rewriting import erase_op

__all__ = ["erase_op"]
