"""Errors located at an operation, raised by passes and by the IR helpers they call.

They live here rather than in ``toolkit.passes`` so that the IR helpers
(``toolkit.ir.rewriting.erase_op``) can raise them without importing the pass
machinery; ``toolkit.passes`` re-exports :class:`PassFailure`.

Example::

    from toolkit.passes import PassFailure
    raise PassFailure("cannot fold a dynamic shape", op=reshape)
"""

from __future__ import annotations

from jaxlib.mlir import ir


class PassFailure(RuntimeError):
    """Raise from a pass to make the pipeline fail with this message.

    The runner emits it as an error diagnostic at ``op`` (default: the op the
    pass was processing) and raises ``PipelineError("pass 'name' failed: message")``.
    """

    def __init__(self, message: str, op: ir.Operation | ir.OpView | None = None):
        super().__init__(message)
        self.op = op


class OpInUseError(PassFailure):
    """An op was not erased because its results still have users.

    Erasing it anyway would leave those users pointing at freed memory, which
    crashes the process at the next verify or print. ``op`` is the op that was
    to be erased; the message names its users.
    """
