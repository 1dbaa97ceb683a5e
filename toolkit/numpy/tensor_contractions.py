"""Products of arrays: ``matmul``, ``dot``, ``vdot``, ``inner``, ``outer`` and
``tensordot`` (one ``dot_general`` each, with numpy's conventions;
``out_sharding`` types the result on Explicit mesh axes), the array-API
``vecdot`` (conjugating its first operand), ``matvec`` and ``vecmat``, and
``cross`` and ``kron``; batch dimensions broadcast as in numpy. Example::

    tnp.matmul(a, b)               # a @ b
    tnp.cross(a, b)                # (..., 3) x (..., 3)
    tnp.matvec(m, v)               # (..., n, k) @ (..., k)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes, sharding_types
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import linalg as lax_linalg
from toolkit.lax import structural as lax_structural
from toolkit.numpy import ufuncs
from toolkit.numpy._core import (
    asarray, broadcast_shapes, broadcast_to, check_arraylike, convert, is_array, jitted_when_eager,
    promote_and_broadcast, result_dtype,
)
from toolkit.numpy.shapes import expand_dims, moveaxis, ravel, squeeze, stack, transpose


def _promoted(a: Any, b: Any) -> tuple[Any, Any]:
    dtype, weak = result_dtype(a, b)
    a, b = convert(a, dtype, weak), convert(b, dtype, weak)
    return (a if is_array(a) else asarray(a)), (b if is_array(b) else asarray(b))


def _with_out_sharding(fun: Any, a: Any, b: Any, out_sharding: Any, **kwargs: Any) -> Any:
    """``fun(a, b, **kwargs)`` whose result's type (explicit sharding) is ``out_sharding`` (JAX's ``out_sharding=``).

    The product (``dot_general``) is typed so directly when its dimensions are
    the result's, else replicated and then resharded (``toolkit.resharding.with_out_sharding``, through the ``core.sharding_types`` hook).
    """
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        shape = tuple(b.shape if a.ndim == 0 else a.shape)
    elif fun is matmul:
        shape = broadcast_shapes(a.shape[:-2], b.shape[:-2]) + tuple(a.shape[-2:-1]) + \
            (tuple(b.shape[-1:]) if b.ndim >= 2 else ())
    else:
        shape = tuple(a.shape[:-1]) + (tuple(b.shape[:-2]) + tuple(b.shape[-1:]) if b.ndim >= 2 else ())
    direct = a.ndim != 1 and b.ndim != 1 and (b.ndim == 2 or fun is dot)
    return sharding_types.with_out_sharding(fun, (a, b), kwargs, out_sharding, "dot_general", shape, primitive="dot_general",
                             how="direct" if direct else "replicated")


@jitted_when_eager(operands=2, static_argnames=("precision", "preferred_element_type"))
def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
           out_sharding: Any = None) -> Any:
    """numpy's ``a @ b``: batch dimensions broadcast, 1-D operands are promoted and squeezed.

    ``precision`` and ``preferred_element_type``: as ``lax.dot_general``'s (JAX's names and values).

    ``out_sharding`` (a sharding, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the
    result's sharding on Explicit mesh axes, for products JAX's rules find ambiguous.
    """
    check_arraylike("matmul", a, b)
    if out_sharding is not None:
        return _with_out_sharding(matmul, a, b, out_sharding, precision=precision,
                                  preferred_element_type=preferred_element_type)
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul does not take 0-d operands (shapes {a.shape} and {b.shape}); use multiply")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec or b_vec:
        # A vector operand is contracted directly, as jnp.matmul does: expanding it to a matrix and
        # squeezing the product gives XLA two reshapes per product (and their transposes in a gradient).
        b_contract = 0 if b_vec else b.ndim - 2
        if a.shape[-1] != b.shape[b_contract]:
            raise TypeError(f"matmul: the contracted dimensions differ: {a.shape[-1]} (last of {a.shape}) vs "
                            f"{b.shape[b_contract]} (of {b.shape})")
        return lax_linalg.dot_general(a, b, (((a.ndim - 1,), (b_contract,)), ((), ())),
                                      precision=precision, preferred_element_type=preferred_element_type)
    if a_vec:
        a = expand_dims(a, 0)
    if b_vec:
        b = expand_dims(b, 1)
    if a.shape[-1] != b.shape[-2]:
        # JAX's class: a TypeError (from dot_general), as jnp.matmul raises.
        raise TypeError(f"matmul: the contracted dimensions differ: {a.shape[-1]} (last of {a.shape}) vs "
                        f"{b.shape[-2]} (second-to-last of {b.shape})")
    if b.ndim == 2:
        # (..., m, k) @ (k, n): contract directly; broadcasting b over the batch would make XLA
        # run a batched product of copies (what JAX avoids too).
        out = lax_linalg.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())),
                                     precision=precision, preferred_element_type=preferred_element_type)
    elif a.ndim == 2:
        # (m, k) @ (..., k, n) gives (m, ..., n): move m next to n.
        out = lax_linalg.dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())),
                                     precision=precision, preferred_element_type=preferred_element_type)
        out = transpose(out, tuple(range(1, b.ndim - 1)) + (0, b.ndim - 1))
    else:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = broadcast_to(a, batch + tuple(a.shape[-2:]))
        b = broadcast_to(b, batch + tuple(b.shape[-2:]))
        nb = len(batch)
        out = lax_linalg.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                                     precision=precision, preferred_element_type=preferred_element_type)
    if a_vec:
        out = squeeze(out, -2)
    if b_vec:
        out = squeeze(out, -1)
    return out


@jitted_when_eager(operands=2, static_argnames=("precision", "preferred_element_type"))
def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """numpy's ``dot``: contracts the last axis of ``a`` with the second-to-last of ``b``.

    ``precision``, ``preferred_element_type`` and ``out_sharding``: as for :func:`matmul`.
    """
    check_arraylike("dot", a, b)
    if out_sharding is not None:
        return _with_out_sharding(dot, a, b, out_sharding, precision=precision,
                                  preferred_element_type=preferred_element_type)
    a, b = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return ufuncs.multiply(a, b)
    contract_b = 0 if b.ndim == 1 else b.ndim - 2
    return lax_linalg.dot_general(a, b, (((a.ndim - 1,), (contract_b,)), ((), ())), precision=precision,
                                  preferred_element_type=preferred_element_type)


@compiled_whole(static_argnames=("precision", "preferred_element_type"))
def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The dot product of ``a`` and ``b`` flattened, ``a`` conjugated first (as ``jnp.vdot``)."""
    check_arraylike("vdot", a, b)
    a, b = _promoted(a, b)
    return dot(ufuncs.conj(ravel(a)), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


@jitted_when_eager(operands=2, static_argnames=("precision", "preferred_element_type"))
def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The sum over the last axes of ``a`` and ``b`` (as ``jnp.inner``); their sizes must match. A scalar
    operand multiplies the other, as in JAX and numpy."""
    check_arraylike("inner", a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return ufuncs.multiply(a if is_array(a) else asarray(a), b if is_array(b) else asarray(b))
    a, b = _promoted(a, b)
    return lax_linalg.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())), precision=precision,
                                  preferred_element_type=preferred_element_type)


@jitted_when_eager(operands=2)
def outer(a: Any, b: Any, out: None = None) -> Any:
    """The outer product of ``a`` and ``b`` flattened: shape ``(a.size, b.size)`` (as ``jnp.outer``).

    ``out``: JAX accepts only None (``NotImplementedError`` otherwise)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    check_arraylike("outer", a, b)
    a, b = _promoted(a, b)
    return lax_linalg.dot_general(ravel(a), ravel(b), (((), ()), ((), ())))


def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None, preferred_element_type: Any = None,
              out_sharding: Any = None) -> Any:
    """Sum products over ``axes`` (an int N: last N of ``a`` with first N of ``b``; or two axis lists).

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's
    type on Explicit mesh axes, given to its ``dot_general`` as JAX's ``lax.dot_general(out_sharding=)``.
    """
    check_arraylike("tensordot", a, b)
    a, b = _promoted(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} is out of range for shapes {a.shape} and {b.shape}")
        a_axes, b_axes = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        a_given, b_given = axes
        a_given = (a_given,) if isinstance(a_given, (int, np.integer)) else tuple(a_given)
        b_given = (b_given,) if isinstance(b_given, (int, np.integer)) else tuple(b_given)
        a_axes = tuple(x % a.ndim for x in a_given)
        b_axes = tuple(x % b.ndim for x in b_given)
    if out_sharding is not None:
        # The result's dimensions are a's free ones then b's: the product itself is typed (JAX's rule input).
        shape = tuple(n for i, n in enumerate(a.shape) if i not in a_axes) + \
            tuple(n for i, n in enumerate(b.shape) if i not in b_axes)
        return sharding_types.with_out_sharding(
            tensordot, (a, b), {"axes": (a_axes, b_axes), "precision": precision,
                                "preferred_element_type": preferred_element_type},
            out_sharding, "dot_general", shape, primitive="dot_general", how="direct")
    return lax_linalg.dot_general(a, b, ((a_axes, b_axes), ((), ())), precision=precision,
                                  preferred_element_type=preferred_element_type)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``sum(conj(x1) * x2, axis)`` with the batch dimensions broadcast.

    As JAX's (``vdot`` vectorized): one batched ``dot_general``, so a float16 product accumulates as XLA's dot
    does, booleans give a boolean, and ``precision`` is the dot's.
    """
    check_arraylike("jnp.vecdot", x1, x2)  # JAX's name for the check
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with axis={axis}")
    x1, x2 = _promoted(moveaxis(x1, axis, -1), moveaxis(x2, axis, -1))
    batch = broadcast_shapes(x1.shape[:-1], x2.shape[:-1])
    x1 = broadcast_to(ufuncs.conj(x1) if dtypes.is_complex(x1.dtype) else x1, batch + tuple(x1.shape[-1:]))
    x2 = broadcast_to(x2, batch + tuple(x2.shape[-1:]))
    nb = len(batch)
    return lax_linalg.dot_general(x1, x2, (((nb,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                                  precision=precision, preferred_element_type=preferred_element_type)


@compiled_whole()
def matvec(x1: Any, x2: Any, /) -> Any:
    """Batched matrix-vector product ``(..., n, k) x (..., k) -> (..., n)``."""
    check_arraylike("matvec", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: operands of rank >= 2 and >= 1 needed, got shapes {x1.shape} and {x2.shape}")
    out = matmul(x1, expand_dims(x2, -1))
    return squeeze(out, -1)


@compiled_whole()
def vecmat(x1: Any, x2: Any, /) -> Any:
    """Batched vector-matrix product ``conj(x1) (..., k) x (..., k, n) -> (..., n)``."""
    check_arraylike("matvec", x1, x2)  # JAX's name for vecmat's check
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: operands of rank >= 1 and >= 2 needed, got shapes {x1.shape} and {x2.shape}")
    out = matmul(expand_dims(ufuncs.conj(x1), -2), x2)
    return squeeze(out, -2)


@compiled_whole(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """Cross product of 2- or 3-vectors along ``axisa``/``axisb``, result vectors along ``axisc``."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(asarray(a), axisa, -1)
    b = moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return ufuncs.subtract(ufuncs.multiply(a[..., 0], b[..., 1]), ufuncs.multiply(a[..., 1], b[..., 0]))
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else ufuncs.multiply(a0, 0)
    b2 = b[..., 2] if b.shape[-1] == 3 else ufuncs.multiply(b0, 0)
    mul, sub = ufuncs.multiply, ufuncs.subtract
    c = stack(promote_and_broadcast(sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                                           sub(mul(a0, b1), mul(a1, b0))))
    return moveaxis(c, 0, axisc)


@compiled_whole()
def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks ``a[i, j] * b``."""
    check_arraylike("kron", a, b)
    a, b = asarray(a), asarray(b)
    if a.ndim < b.ndim:
        a = lax_structural.reshape(a, (1,) * (b.ndim - a.ndim) + tuple(a.shape))
    elif b.ndim < a.ndim:
        b = lax_structural.reshape(b, (1,) * (a.ndim - b.ndim) + tuple(b.shape))
    nd = a.ndim
    a_r = lax_structural.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b_r = lax_structural.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    out = ufuncs.multiply(a_r, b_r)
    return lax_structural.reshape(out, tuple(a.shape[i] * b.shape[i] for i in range(nd)))
