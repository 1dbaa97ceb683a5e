"""Window functions of ``jax.numpy`` (numpy's signal windows): ``bartlett``, ``blackman``, ``hamming``,
``hanning`` and ``kaiser``, each ``M`` points (static) in the default float type.

Example::

    tnp.hanning(5)          # [0. , 0.5, 1. , 0.5, 0. ]
    tnp.kaiser(8, beta=14.0)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.lax import structural as lax_structural
from toolkit.numpy import creation, ufuncs
from toolkit.numpy.element_functions import i0


def _points(M: Any, name: str) -> tuple[int, Any]:
    """``M`` as an int and the positions ``0..M-1`` (``None`` when ``M <= 1``: the window is all ones)."""
    if known_value(M) is None:
        raise ConcretizationTypeError(f"the M argument of jnp.{name} must be static (a Python int), not traced")
    try:
        M = int(operator.index(M)) if not isinstance(M, float) else int(M)
    except TypeError as e:
        raise TypeError(f"the M argument of jnp.{name} must be an integer, got {M!r}") from e
    if M < 0:
        raise TypeError(f"the M argument of jnp.{name} must be non-negative, got {M} (JAX's error class)")
    if M <= 1:
        return M, None
    return M, lax_structural.iota(dtypes.default_float_dtype(), M)


def _ones(M: int) -> Any:
    return creation.ones((M,), dtypes.default_float_dtype())


def bartlett(M: int) -> Any:
    """The Bartlett (triangular) window of ``M`` points, as ``jnp.bartlett``."""
    M, n = _points(M, "bartlett")
    if n is None:
        return _ones(M)
    return ufuncs.subtract(1, ufuncs.divide(ufuncs.absolute(ufuncs.subtract(ufuncs.add(ufuncs.multiply(2, n), 1), M)),
                                            M - 1))


def blackman(M: int) -> Any:
    """The Blackman window of ``M`` points, as ``jnp.blackman``."""
    M, n = _points(M, "blackman")
    if n is None:
        return _ones(M)
    phase = ufuncs.divide(ufuncs.multiply(2 * np.pi, n), M - 1)
    return ufuncs.add(ufuncs.subtract(0.42, ufuncs.multiply(0.5, ufuncs.cos(phase))),
                      ufuncs.multiply(0.08, ufuncs.cos(ufuncs.multiply(2, phase))))


def hamming(M: int) -> Any:
    """The Hamming window of ``M`` points, as ``jnp.hamming``."""
    M, n = _points(M, "hamming")
    if n is None:
        return _ones(M)
    return ufuncs.subtract(0.54, ufuncs.multiply(0.46, ufuncs.cos(ufuncs.divide(ufuncs.multiply(2 * np.pi, n), M - 1))))


def hanning(M: int) -> Any:
    """The Hann window of ``M`` points, as ``jnp.hanning``."""
    M, n = _points(M, "hanning")
    if n is None:
        return _ones(M)
    return ufuncs.multiply(0.5, ufuncs.subtract(1, ufuncs.cos(ufuncs.divide(ufuncs.multiply(2 * np.pi, n), M - 1))))


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of ``M`` points with shape parameter ``beta``, as ``jnp.kaiser``."""
    M, n = _points(M, "kaiser")
    if n is None:
        return _ones(M)
    alpha = 0.5 * (M - 1)
    ratio = ufuncs.divide(ufuncs.subtract(n, alpha), alpha)
    return ufuncs.divide(i0(ufuncs.multiply(beta, ufuncs.sqrt(ufuncs.subtract(1, ufuncs.square(ratio))))), i0(beta))
