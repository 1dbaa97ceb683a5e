"""The rest of ``jax.nn``'s activations (JAX 0.10.2's definitions): ``identity``, ``tanh``, ``hard_silu``,
``mish``, ``squareplus``, ``sparse_plus``, ``sparse_sigmoid``, ``log1mexp`` (with JAX's custom JVP) and
``logmeanexp``. The older activations are in ``toolkit.nn.functions``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core.compiled_whole import compiled_whole
import toolkit.numpy as tnp
from toolkit.ad.custom_derivatives import custom_jvp
from toolkit.nn.functions import _arraylike as _array, hard_sigmoid, logsumexp, softplus
from toolkit.numpy._core import canonical_axes

tanh = tnp.tanh  # jax.nn.tanh is jax.numpy.tanh


@compiled_whole()
def identity(x: Any) -> Any:
    """``x`` itself, as an array (``jax.nn.identity``)."""
    return _array("identity", x)


@compiled_whole()
def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)`` (``jax.nn.hard_silu``; ``hard_swish`` is the same function)."""
    x = _array("hard_silu", x)
    return x * hard_sigmoid(x)


@compiled_whole()
def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))`` (``jax.nn.mish``)."""
    x = _array("mish", x)
    return x * tnp.tanh(softplus(x))


@compiled_whole()
def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x² + b)) / 2``, a smooth ReLU (``jax.nn.squareplus``)."""
    x = _array("squareplus", x)
    return (x + tnp.sqrt(tnp.square(x) + b)) / 2


@compiled_whole()
def sparse_plus(x: Any) -> Any:
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)² / 4`` between (``jax.nn.sparse_plus``)."""
    x = _array("sparse_plus", x)
    return tnp.where(x <= -1.0, 0.0, tnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@compiled_whole()
def sparse_sigmoid(x: Any) -> Any:
    """``clip((x + 1) / 2, 0, 1)`` (``jax.nn.sparse_sigmoid``)."""
    return 0.5 * tnp.clip(_array("sparse_sigmoid", x) + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` accurately for ``x > 0`` (``jax.nn.log1mexp``; its derivative is JAX's
    ``1 / expm1(x)``)."""
    x = _array("log1mexp", x)
    c = tnp.log(2.0)
    return tnp.where(x < c, tnp.log(-tnp.expm1(-x)), tnp.log1p(-tnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / tnp.expm1(x))


@compiled_whole(static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x), axis))`` without overflow (``jax.nn.logmeanexp``); ``where`` selects the elements
    that count."""
    x = _array("logmeanexp", x)
    if where is None:
        lse = logsumexp(x, axis=axis, keepdims=keepdims)
        axes = tuple(range(x.ndim)) if axis is None else canonical_axes(axis, x.ndim)
        count = int(np.prod([x.shape[a] for a in axes]))
        return lse - tnp.log(tnp.asarray(count, dtype=lse.dtype))
    mask = tnp.broadcast_to(tnp.asarray(where, dtype=bool), x.shape)
    lse = logsumexp(tnp.where(mask, x, -tnp.inf), axis=axis, keepdims=keepdims)
    count = tnp.sum(mask, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - tnp.log(count)
