"""Rules for ``toolkit/lax/sorting.py``: sorting permutes, so tangents follow the same permutation.

The JVP sorts an extra ``iota`` operand along with the keys to learn the
permutation, then gathers each tangent with it (``take_along_axis``), which
reverse mode transposes into a scatter-add. ``top_k`` gathers with its indices.
"""

from __future__ import annotations

import numpy as np

from toolkit import numpy as tnp
from toolkit.ad.registry import JVP_RULES
from toolkit.ad.values import Zero, tangent_aval, value_aval
from toolkit.lax import sorting
from toolkit.lax import structural


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    shape = value_aval(primals[0]).shape
    iota = structural.broadcasted_iota(np.int32, shape, dimension)
    outs = sorting.sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    permutation = outs[-1]
    out_tangents = [Zero(tangent_aval(value_aval(o))) if isinstance(t, Zero)
                    else tnp.take_along_axis(t, permutation, axis=dimension)
                    for o, t in zip(outs[:-1], tangents)]
    return list(outs[:-1]), out_tangents


def _top_k_jvp(primals, tangents, *, k):
    values, indices = sorting.top_k_p.bind(*primals, k=k)
    (t,) = tangents
    return [values, indices], [tnp.take_along_axis(t, indices, axis=-1),
                               Zero(tangent_aval(value_aval(indices)))]


JVP_RULES[sorting.sort_p] = _sort_jvp
JVP_RULES[sorting.top_k_p] = _top_k_jvp
