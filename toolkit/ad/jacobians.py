"""``jacfwd``, ``jacrev`` and ``hessian`` (JAX's signatures and pytree layout).

``jacfwd`` maps (``toolkit.vmap``) the standard basis of the inputs through
the JVP of one ``linearize``; ``jacrev`` maps the standard basis of the
outputs through the pullback of one ``vjp`` — JAX's construction. Results have JAX's layout: the output's tree, each
leaf holding a tree shaped like the differentiated arguments whose leaves
have shape ``out_leaf.shape + in_leaf.shape``.

Example::

    toolkit.jacrev(lambda x: tnp.sin(x) * x[0])(np.arange(3.0, dtype=np.float32))   # f32[3, 3]
    toolkit.hessian(lambda x: tnp.sum(x ** 3))(x)                                      # diag(6 x)
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from toolkit.ad.api import (
    _argnums_tuple, check_input_dtype_revderiv, check_output_dtype_revderiv, linearize, vjp,
)
from toolkit.core import dtypes, pytrees
from toolkit.core.avals import aval_of
from toolkit.batching import vmap
import toolkit.numpy as tnp
from toolkit.lax import elementwise

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


def _partial(fun: Callable[..., Any], argnums: int | Sequence[int], args: tuple, kwargs: dict,
             what: str) -> tuple[Callable[..., Any], tuple]:
    nums = _argnums_tuple(argnums, len(args), what)

    def f_partial(*dyn: Any) -> Any:
        full = list(args)
        for a, value in zip(nums, dyn):
            full[a] = value
        return fun(*full, **kwargs)
    return f_partial, tuple(args[a] for a in nums)


def _cast(x: np.ndarray, dtype: Any) -> np.ndarray:
    if np.iscomplexobj(x) and not dtypes.is_complex(dtype):
        x = x.real
    return x.astype(dtype)


def _common_dtype(leaves: Sequence[Any]) -> Any:
    dts = [aval_of(leaf).dtype for leaf in leaves]
    out = dts[0] if dts else np.dtype(np.float32)
    for d in dts[1:]:
        out = dtypes.promote_types(out, d)
    return out


def _stacked_basis(leaves: Sequence[Any], total: int, dtype: Any) -> list[np.ndarray]:
    """The ``total`` standard basis vectors of the flattened ``leaves``, stacked: one ``(total, *shape)`` per leaf."""
    eye = np.eye(total, dtype=dtype)
    out, offset = [], 0
    for leaf in leaves:
        aval = aval_of(leaf)
        size = math.prod(aval.shape)
        out.append(_cast(eye[:, offset:offset + size].reshape((total,) + tuple(aval.shape)), aval.dtype))
        offset += size
    return out


def _vmap(fun: Callable[..., list[Any]], basis: Sequence[Any], out_axis: int) -> list[Any]:
    """``fun`` mapped over the leading axis of every ``basis`` array with ``toolkit.vmap``."""
    return list(vmap(fun, in_axes=0, out_axes=out_axis)(*basis))


def _split_axis(arr: Any, axis_size_shapes: Sequence[tuple], lead: tuple, at_end: bool) -> list[Any]:
    """Split the flat axis of ``arr`` (last if ``at_end`` else first) into pieces reshaped to each shape."""
    pieces, offset = [], 0
    for shape in axis_size_shapes:
        size = math.prod(shape)
        if at_end:
            piece = arr[..., offset:offset + size]
            pieces.append(tnp.reshape(piece, tuple(lead) + tuple(shape)))
        else:
            piece = arr[offset:offset + size]
            pieces.append(tnp.reshape(piece, tuple(shape) + tuple(lead)))
        offset += size
    return pieces


def _check_input_jacfwd(holomorphic: bool, x: Any) -> None:
    dtype = aval_of(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"jacfwd with holomorphic=True requires inputs with complex dtype, but got {dtype.name}.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                        f"got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex inputs or integer inputs, "
                        "use toolkit.jvp directly.")


def _check_output_jacfwd(holomorphic: bool, x: Any) -> None:
    dtype = aval_of(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"jacfwd with holomorphic=True requires outputs with complex dtype, but got {dtype.name}.")


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode (one JVP per input element), as ``jax.jacfwd``."""
    if not callable(fun):
        raise TypeError(f"jacfwd: expected a callable function, got {type(fun).__name__}")

    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = _partial(fun, argnums, args, kwargs, "jacfwd")
        pytrees.tree_map(lambda x: _check_input_jacfwd(holomorphic, x), dyn_args)
        result = linearize(f_partial, *dyn_args, has_aux=has_aux)
        y, f_jvp = result[0], result[1]
        pytrees.tree_map(lambda x: _check_output_jacfwd(holomorphic, x), y)
        in_leaves, _ = pytrees.tree_flatten(dyn_args)
        total = sum(math.prod(aval_of(leaf).shape) for leaf in in_leaves)
        dtype = _common_dtype(in_leaves)
        y_leaves, y_tree = pytrees.tree_flatten(y)
        in_struct = pytrees.tree_structure(dyn_args)
        basis = _stacked_basis(in_leaves, total, dtype)
        stacked_cols = _vmap(lambda *ts: pytrees.tree_leaves(f_jvp(*pytrees.tree_unflatten(in_struct, list(ts)))),
                             basis, -1) if total else None
        example = dyn_args[0] if isinstance(argnums, (int, np.integer)) else dyn_args
        ex_leaves, ex_tree = pytrees.tree_flatten(example)
        ex_shapes = [tuple(aval_of(leaf).shape) for leaf in ex_leaves]
        jac_leaves = []
        for i_y, y_leaf in enumerate(y_leaves):
            y_shape = tuple(aval_of(y_leaf).shape)
            if stacked_cols is not None:
                pieces = _split_axis(stacked_cols[i_y], ex_shapes, y_shape, at_end=True)
            else:
                pieces = [_zeros(y_shape + s, aval_of(y_leaf).dtype) for s in ex_shapes]
            pieces = [_convert(p, aval_of(y_leaf).dtype) for p in pieces]
            jac_leaves.append(pytrees.tree_unflatten(ex_tree, pieces))
        jac = pytrees.tree_unflatten(y_tree, jac_leaves)
        return (jac, result[2]) if has_aux else jac

    jacfun.__name__ = getattr(fun, '__name__', 'fun')  # JAX's jacfwd(f) is named f
    jacfun.__wrapped__ = fun  # type: ignore[attr-defined]  # a function attribute, as functools.wraps sets it
    return jacfun


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode (one VJP per output element), as ``jax.jacrev``."""
    if not callable(fun):
        raise TypeError(f"jacrev: expected a callable function, got {type(fun).__name__}")

    def jacfun(*args: Any, **kwargs: Any) -> Any:
        f_partial, dyn_args = _partial(fun, argnums, args, kwargs, "jacrev")
        pytrees.tree_map(lambda x: check_input_dtype_revderiv("jacrev", holomorphic, allow_int, x), dyn_args)
        result = vjp(f_partial, *dyn_args, has_aux=has_aux)
        y, pullback = result[0], result[1]
        pytrees.tree_map(lambda x: check_output_dtype_revderiv("jacrev", holomorphic, x), y)
        y_leaves, y_tree = pytrees.tree_flatten(y)
        total = sum(math.prod(aval_of(leaf).shape) for leaf in y_leaves)
        dtype = _common_dtype(y_leaves)
        example = dyn_args[0] if isinstance(argnums, (int, np.integer)) else dyn_args
        single = isinstance(argnums, (int, np.integer))

        def pull(*cts: Any) -> list[Any]:
            out = pullback(pytrees.tree_unflatten(y_tree, list(cts)))
            return pytrees.tree_leaves(out[0] if single else out)
        rows = _vmap(pull, _stacked_basis(y_leaves, total, dtype), 0) if total else None
        ex_leaves, ex_tree = pytrees.tree_flatten(example)
        y_shapes = [tuple(aval_of(leaf).shape) for leaf in y_leaves]
        # per input leaf: the pieces for each output leaf
        per_input = []
        for j, ex_leaf in enumerate(ex_leaves):
            ex_aval = aval_of(ex_leaf)
            if rows is not None:
                pieces = _split_axis(rows[j], y_shapes, tuple(ex_aval.shape), at_end=False)
            else:
                pieces = [_zeros(s + tuple(ex_aval.shape), ex_aval.dtype) for s in y_shapes]
            per_input.append([_convert(p, ex_aval.dtype) for p in pieces])
        jac_leaves = [pytrees.tree_unflatten(ex_tree, [per_input[j][i] for j in range(len(ex_leaves))])
                      for i in range(len(y_leaves))]
        jac = pytrees.tree_unflatten(y_tree, jac_leaves)
        return (jac, result[2]) if has_aux else jac

    jacfun.__name__ = getattr(fun, '__name__', 'fun')  # JAX's jacrev(f) is named f
    jacfun.__wrapped__ = fun  # type: ignore[attr-defined]  # a function attribute, as functools.wraps sets it
    return jacfun


jacobian = jacrev


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """``jacfwd(jacrev(fun))``: the Hessian, as ``jax.hessian``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)


def _zeros(shape: tuple, dtype: Any) -> Any:
    return tnp.zeros(shape, dtype)


def _convert(x: Any, dtype: Any) -> Any:
    aval = aval_of(x)
    if aval.dtype == dtype:
        return x
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(dtype):
        x = elementwise.real(x)
    return elementwise.convert_element_type(x, dtype)
