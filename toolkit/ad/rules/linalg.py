"""JVP and transpose rules for ``toolkit/lax/linalg.py`` (``dot_general`` is bilinear)."""

from __future__ import annotations

import numpy as np

from toolkit.ad.jvp import defjvp
from toolkit.ad.registry import TRANSPOSE_RULES
from toolkit.ad.values import Zero, is_undefined, value_aval
from toolkit.lax import elementwise
from toolkit.lax import linalg
from toolkit.lax import structural


def _dot(x, y, dimension_numbers, precision, preferred_element_type):
    return linalg.dot_general_p.bind(x, y, dimension_numbers=dimension_numbers, precision=precision,
                                     preferred_element_type=preferred_element_type)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, precision, preferred_element_type, swap_ans=False):
    """The cotangent of ``x`` in ``dot_general(x, y)`` (``swap_ans``: of ``y`` in ``dot_general(y, x)``)."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim, y_ndim = len(x_aval.shape), len(value_aval(y).shape)
    x_kept = [d for d in range(x_ndim) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y_ndim) if d not in y_contract and d not in y_batch]
    nbatch = len(x_batch)
    ans_batch = list(range(nbatch))
    if swap_ans:  # the answer is (batch, y_kept, x_kept)
        ans_y = list(range(nbatch, nbatch + len(y_kept)))
    else:         # the answer is (batch, x_kept, y_kept)
        ans_y = list(range(nbatch + len(x_kept), nbatch + len(x_kept) + len(y_kept)))
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(y_batch)))
    # The product is (batch, x_kept, x_contract ordered as y_contract is sorted): permute back to x's order.
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = tuple(int(i) for i in np.argsort(list(x_batch) + x_kept + x_contract_by_y))
    product = _dot(ct, y, dims, precision, None)
    # An identity permutation is no transpose at all (as JAX's lax.transpose): XLA is not handed one.
    out = product if out_axes == tuple(range(len(out_axes))) else structural.transpose(product, out_axes)
    if value_aval(out).dtype != x_aval.dtype:
        out = elementwise.convert_element_type(out, x_aval.dtype)
    return out


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision=None, preferred_element_type=None):
    if isinstance(ct, Zero):
        return [None, None]
    if is_undefined(x) and is_undefined(y):
        raise ValueError("dot_general is not linear in both operands at once")
    if is_undefined(x):
        return [_transpose_lhs(ct, x.aval, y, dimension_numbers, precision, preferred_element_type), None]
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return [None, _transpose_lhs(ct, y.aval, x, swapped, precision, preferred_element_type, swap_ans=True)]


defjvp(linalg.dot_general_p,
       lambda t, ans, x, y, **params: _dot(t, y, params["dimension_numbers"], params.get("precision"),
                                           params.get("preferred_element_type")),
       lambda t, ans, x, y, **params: _dot(x, t, params["dimension_numbers"], params.get("precision"),
                                           params.get("preferred_element_type")))
TRANSPOSE_RULES[linalg.dot_general_p] = _dot_general_transpose
