"""JVP of ``approx_top_k`` (JAX's): the tangent gathered at the returned indices; the indices' is zero."""

from __future__ import annotations

from toolkit import numpy as tnp
from toolkit.ad.registry import JVP_RULES
from toolkit.ad.values import Zero, tangent_aval, value_aval
from toolkit.lax import approximate_top_k


def _approx_top_k_jvp(primals, tangents, **params):
    values, indices = approximate_top_k.approx_top_k_p.bind(*primals, **params)
    (t,) = tangents
    axis = params["reduction_dimension"] % value_aval(values).ndim
    out_t = Zero(tangent_aval(value_aval(values))) if isinstance(t, Zero) else tnp.take_along_axis(t, indices, axis)
    return [values, indices], [out_t, Zero(tangent_aval(value_aval(indices)))]


JVP_RULES[approximate_top_k.approx_top_k_p] = _approx_top_k_jvp
