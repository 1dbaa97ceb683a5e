"""Products: ``matmul``, ``dot``, ``vdot``, ``tensordot``, ``outer``, ``inner``."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.lax import linalg as lax_linalg
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to, is_array, result_dtype, convert
from toolkit.numpy.shapes import expand_dims, squeeze, transpose, ravel


def _promoted(a: Any, b: Any) -> tuple[Any, Any]:
    dtype, weak = result_dtype(a, b)
    a, b = convert(a, dtype, weak), convert(b, dtype, weak)
    return (a if is_array(a) else asarray(a)), (b if is_array(b) else asarray(b))


def _with_out_sharding(fun: Any, a: Any, b: Any, out_sharding: Any, **kwargs: Any) -> Any:
    """``fun(a, b, **kwargs)`` whose result's type (explicit sharding) is ``out_sharding`` (JAX's ``out_sharding=``).

    The product (``dot_general``) is typed so directly when its dimensions are
    the result's, else replicated and then resharded (``toolkit.shard.explicit.with_out_sharding``).
    """
    from toolkit.shard.explicit import with_out_sharding
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        shape = tuple(b.shape if a.ndim == 0 else a.shape)
    elif fun is matmul:
        shape = broadcast_shapes(a.shape[:-2], b.shape[:-2]) + tuple(a.shape[-2:-1]) + \
            (tuple(b.shape[-1:]) if b.ndim >= 2 else ())
    else:
        shape = tuple(a.shape[:-1]) + (tuple(b.shape[:-2]) + tuple(b.shape[-1:]) if b.ndim >= 2 else ())
    direct = a.ndim != 1 and b.ndim != 1 and (b.ndim == 2 or fun is dot)
    return with_out_sharding(fun, (a, b), kwargs, out_sharding, "dot_general", shape, primitive="dot_general",
                             how="direct" if direct else "replicated")


def matmul(a: Any, b: Any, *, preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """numpy's ``a @ b``: batch dimensions broadcast, 1-D operands are promoted and squeezed.

    ``out_sharding`` (a sharding, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the
    result's sharding on Explicit mesh axes, for products JAX's rules find ambiguous.
    """
    if out_sharding is not None:
        return _with_out_sharding(matmul, a, b, out_sharding, preferred_element_type=preferred_element_type)
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul does not take 0-d operands (shapes {a.shape} and {b.shape}); use multiply")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = expand_dims(a, 0)
    if b_vec:
        b = expand_dims(b, 1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: the contracted dimensions differ: {a.shape[-1]} (last of {a.shape}) vs "
                         f"{b.shape[-2]} (second-to-last of {b.shape})")
    if b.ndim == 2:
        # (..., m, k) @ (k, n): contract directly; broadcasting b over the batch would make XLA
        # run a batched product of copies (what JAX avoids too).
        out = lax_linalg.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())),
                                     preferred_element_type=preferred_element_type)
    elif a.ndim == 2:
        # (m, k) @ (..., k, n) gives (m, ..., n): move m next to n.
        out = lax_linalg.dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())),
                                     preferred_element_type=preferred_element_type)
        out = transpose(out, tuple(range(1, b.ndim - 1)) + (0, b.ndim - 1))
    else:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = broadcast_to(a, batch + tuple(a.shape[-2:]))
        b = broadcast_to(b, batch + tuple(b.shape[-2:]))
        nb = len(batch)
        out = lax_linalg.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                                     preferred_element_type=preferred_element_type)
    if a_vec:
        out = squeeze(out, -2)
    if b_vec:
        out = squeeze(out, -1)
    return out


def dot(a: Any, b: Any, *, preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """numpy's ``dot``: contracts the last axis of ``a`` with the second-to-last of ``b``.

    ``out_sharding``: as for :func:`matmul`.
    """
    if out_sharding is not None:
        return _with_out_sharding(dot, a, b, out_sharding, preferred_element_type=preferred_element_type)
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from toolkit.numpy.ufuncs import multiply
        return multiply(a, b)
    contract_b = 0 if b.ndim == 1 else b.ndim - 2
    return lax_linalg.dot_general(a, b, (((a.ndim - 1,), (contract_b,)), ((), ())),
                                  preferred_element_type=preferred_element_type)


def vdot(a: Any, b: Any) -> Any:
    from toolkit.numpy.ufuncs import conj
    a, b = _promoted(a, b)
    return dot(conj(ravel(a)), ravel(b))


def inner(a: Any, b: Any) -> Any:
    a, b = _promoted(a, b)
    return lax_linalg.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a: Any, b: Any) -> Any:
    a, b = _promoted(a, b)
    return lax_linalg.dot_general(ravel(a), ravel(b), (((), ()), ((), ())))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum products over ``axes`` (an int N: last N of ``a`` with first N of ``b``; or two axis lists)."""
    a, b = _promoted(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} is out of range for shapes {a.shape} and {b.shape}")
        a_axes, b_axes = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        a_axes, b_axes = axes
        a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
        b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
        a_axes = tuple(x % a.ndim for x in a_axes)
        b_axes = tuple(x % b.ndim for x in b_axes)
    return lax_linalg.dot_general(a, b, ((a_axes, b_axes), ((), ())))
