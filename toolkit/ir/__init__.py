"""MLIR helpers: the shared context, builders, attribute helpers, safe rewriting and diagnostics.

``erase_op`` is re-exported here because it is the one way a pass should
erase an op (it refuses while the op's results are used); ``parse_module``
because it is the one-call way to get a module to run passes on (in
toolkit's shared context).
"""

from toolkit.ir.rewriting import erase_op
from toolkit.ir.serialization import parse_module

__all__ = ["erase_op", "parse_module"]
