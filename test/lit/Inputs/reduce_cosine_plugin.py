"""A pass with a planted bug, for toolkit-reduce's lit tests: it fails on every stablehlo.cosine.

`test-lit-reduce-cosine{bug=error}` fails with "cannot rewrite this cosine",
`{bug=crash}` kills its process with SIGSEGV, `{bug=none}` does nothing.
"""

import dataclasses
import os
import signal
from typing import ClassVar

from toolkit.ir.walk import ops_named
from toolkit.passes import ModulePass, PassFailure, register_pass


@register_pass
@dataclasses.dataclass(frozen=True)
class ReduceCosineBug(ModulePass):
    name: ClassVar[str] = "test-lit-reduce-cosine"
    description: ClassVar[str] = "Fails on stablehlo.cosine (a planted bug for toolkit-reduce's tests)."
    bug: str = "error"

    def apply(self, op):
        for cosine in ops_named(op, "stablehlo.cosine"):
            if self.bug == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if self.bug == "error":
                raise PassFailure("cannot rewrite this cosine", op=cosine)
