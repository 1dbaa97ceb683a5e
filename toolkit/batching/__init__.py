"""Batching (``toolkit.vmap``) as an interpreter over toolkit's ``Program``.

``api.vmap`` traces the function at unbatched avals and ``interpret.batch_program``
evaluates the program with batched values, calling one rule per primitive
from ``registry.BATCHING_RULES`` (filled by ``rules/<family>.py``, mirroring
``toolkit/lax``). See ``docs/vmap.md``.

Example::

    import toolkit
    toolkit.vmap(lambda x: x @ x.T)(np.ones((4, 3, 3), np.float32))
"""

from toolkit.batching.api import vmap
from toolkit.batching.interpret import AxisData, batch_program
from toolkit.batching.registry import (
           BATCHING_RULES,
           UNBATCHABLE,
           register_batching,
           register_unbatchable,
)

__all__ = [
           "BATCHING_RULES",
           "UNBATCHABLE",
           "AxisData",
           "batch_program",
           "register_batching",
           "register_unbatchable",
           "vmap",
]
