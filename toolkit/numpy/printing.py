"""Array text and numpy's print options, as ``jax.numpy`` has them: ``array_str`` and ``array_repr``
(numpy's, over the array's value) and numpy's ``get_printoptions``, ``set_printoptions`` and
``printoptions`` (toolkit arrays print through numpy, so numpy's options are theirs).

Example::

    with tnp.printoptions(precision=2):
        print(tnp.asarray([1 / 3]))      # [0.33]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core.tracing import ConcretizationTypeError, Tracer

#: numpy's print options (JAX's are numpy's too): a context manager, a getter and a setter.
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def _value(name: str, a: Any) -> np.ndarray:
    if isinstance(a, Tracer):
        raise ConcretizationTypeError(f"{name} needs a concrete array; a traced value has no value to print")
    return np.asarray(a)


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """The text of ``a``'s values (numpy's ``array_str``); ``a`` must be concrete."""
    return np.array_str(_value("array_str", a), max_line_width, precision, suppress_small)


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """numpy's ``array_repr`` of ``arr``'s value (``array([...], dtype=...)``); ``arr`` must be concrete."""
    return np.array_repr(_value("array_repr", arr), max_line_width, precision, suppress_small)
