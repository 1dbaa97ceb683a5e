"""Set operations of ``jax.numpy`` with static output shapes: ``isin`` (an all-pairs comparison).

Example::

    tnp.isin(labels, tnp.asarray([1, 3]))      # True where a label is 1 or 3
"""

from __future__ import annotations

from typing import Any

from toolkit.numpy import reductions, shapes, ufuncs
from toolkit.numpy._core import asarray


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Any:
    """True where ``element`` occurs in ``test_elements`` (all-pairs comparison)."""
    element, test = asarray(element), shapes.ravel(asarray(test_elements))
    hit = reductions.any(ufuncs.equal(shapes.expand_dims(element, -1), test), -1)
    return ufuncs.logical_not(hit) if invert else hit
