"""JVP rules for ``toolkit.lax.special_functions``: JAX 0.10.2's.

``betainc`` is differentiable in ``x`` only and ``polygamma`` in ``x`` only (a tangent for the other
operands is JAX's ``ValueError``); ``igamma_grad_a`` and ``zeta`` have no rule, as in JAX (differentiating
them is the usual missing-rule error; ``toolkit.scipy.special.zeta`` has its own derivative).
"""

from __future__ import annotations

import numpy as np

from toolkit.ad.jvp import defjvp
from toolkit.ad.registry import NO_JVP
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise as ew
from toolkit.lax import special_functions as sf
from toolkit.lax.structural import full_like


def _not_supported(message: str):
    def term(t, ans, *primals):
        raise ValueError(message)
    return term


def _betainc_x(t, ans, a, b, x):
    lbeta = ew.lgamma(a) + ew.lgamma(b) - ew.lgamma(a + b)
    return t * ew.exp((b - 1.0) * ew.log1p(-x) + (a - 1.0) * ew.log(x) - lbeta)


def _igamma_x(t, ans, a, x):
    return t * ew.exp(-x + (a - 1.0) * ew.log(x) - ew.lgamma(a))


def _igamma_a(t, ans, a, x):
    return t * sf.igamma_grad_a(a, x)


_BETAINC_AB = "Betainc gradient with respect to a and b not supported."
defjvp(sf.regularized_incomplete_beta_p, _not_supported(_BETAINC_AB), _not_supported(_BETAINC_AB), _betainc_x)
defjvp(sf.igamma_p, _igamma_a, _igamma_x)
defjvp(sf.igammac_p, lambda t, ans, a, x: -_igamma_a(t, ans, a, x), lambda t, ans, a, x: -_igamma_x(t, ans, a, x))
defjvp(sf.polygamma_p, _not_supported("polygamma gradient with respect to m is not supported"),
       lambda t, ans, m, x: t * sf.polygamma(m + 1.0, x))
defjvp(sf.bessel_i0e_p, lambda t, ans, x: t * (sf.bessel_i1e(x) - ew.sign(x) * ans))


def _bessel_i1e_x(t, ans, x):
    # Near 0, i1e(x)/x -> 1/2: the rule's reciprocal would divide by zero.
    eps = np.finfo(aval_of(x).dtype).eps
    not_tiny = ew.abs(x) > eps
    safe_x = ew.select(not_tiny, x, full_like(x, eps, dtype=aval_of(x).dtype))
    dy_dx = sf.bessel_i0e(safe_x) - ans * (ew.sign(safe_x) + 1.0 / safe_x)
    return t * ew.select(not_tiny, dy_dx, full_like(x, 0.5, dtype=aval_of(x).dtype))


defjvp(sf.bessel_i1e_p, _bessel_i1e_x)

NO_JVP[sf.igamma_grad_a_p] = "JAX 0.10.2 defines no derivative of igamma_grad_a (a second derivative of igamma in a)"
NO_JVP[sf.zeta_p] = ("JAX 0.10.2 defines no JVP for lax.zeta; jax.scipy.special.zeta (toolkit.scipy.special.zeta) "
                     "is a custom_jvp with d/dq = -x zeta(x + 1, q)")
