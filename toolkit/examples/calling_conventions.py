"""The example modules of ``docs/calling-conventions.md``: ``python -m toolkit.examples.calling_conventions``.

Prints the exported module of ``f(x, y) = {"out": tanh(x) * 2 + y}`` on
``float32[2,3]`` inputs under calling conventions 9 and 10, for one platform
and for two. (A documentation generator: it exports, so it lives above
``toolkit.export``, never inside it.)
"""

from __future__ import annotations

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit.export import export


def print_examples() -> None:
    """Print the generated section of ``docs/calling-conventions.md``."""
    def f(x, y):
        return {"out": tnp.tanh(x) * 2 + y}

    spec = np.ones((2, 3), np.float32)
    for platforms in (("cpu",), ("cpu", "cuda")):
        for version in (9, 10):
            exp = export(toolkit.jit(f), platforms=platforms, calling_convention_version=version)(spec, spec)
            print(f"### platforms={platforms}, calling_convention_version={version}\n")
            print("```mlir")
            print(exp.mlir_module().rstrip())
            print("```\n")


if __name__ == "__main__":  # pragma: no cover
    print_examples()
