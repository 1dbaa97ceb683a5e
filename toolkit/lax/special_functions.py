"""Special functions of ``jax.lax``: incomplete gamma and beta, polygamma, Hurwitz zeta, scaled Bessel I0/I1.

The primitives are JAX 0.10.2's, with its names and lowerings on CPU
(``toolkit/lowering/rules/special_functions.py``): ``polygamma``, ``zeta`` and ``bessel_i1e`` are one CHLO
op each (``chlo.polygamma``, ``chlo.zeta``, ``chlo.bessel_i1e``); ``igamma``, ``igammac``,
``igamma_grad_a``, ``regularized_incomplete_beta`` and ``bessel_i0e`` expand into the series, continued
fractions and Chebyshev sums of ``toolkit/lax/special_algorithms.py``. ``random_gamma_grad`` is no
primitive in JAX either: it is that expansion, inline.

Operands are floating point of one dtype and of equal shapes; as ``jax.lax``'s n-ary ops, a rank-0
operand and size-1 dimensions broadcast.
"""

from __future__ import annotations

from typing import Any

from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.lax import special_algorithms
from toolkit.lax.elementwise import FLOAT, _broadcast_operands, convert_element_type
from toolkit.lax.shape_rules import all_weak, check_dtype, same_dtypes, same_shapes

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("special_functions")

__all__ = ["bessel_i0e", "bessel_i1e", "betainc", "igamma", "igamma_grad_a", "igammac", "polygamma",
           "random_gamma_grad", "zeta"]


def _nary_rule(name: str):
    def rule(*operands: ShapedArray) -> ShapedArray:
        for x in operands:
            check_dtype(name, x, FLOAT)
        shape = same_shapes(name, *operands)
        dtype = same_dtypes(name, *operands)
        return ShapedArray(shape, dtype, all_weak(*operands))
    return rule


def _primitive(name: str, arity: int, *, chlo: str | None = None):
    """An elementwise primitive of ``arity`` float operands; ``chlo``: the CHLO op it lowers to one to one."""
    return family.primitive(name, shape_rule=_nary_rule(name), arity=arity, chlo=chlo)


regularized_incomplete_beta_p = _primitive("regularized_incomplete_beta", 3)
igamma_p = _primitive("igamma", 2)
igammac_p = _primitive("igammac", 2)
igamma_grad_a_p = _primitive("igamma_grad_a", 2)
polygamma_p = _primitive("polygamma", 2, chlo="chlo.polygamma")
zeta_p = _primitive("zeta", 2, chlo="chlo.zeta")
bessel_i0e_p = _primitive("bessel_i0e", 1)
bessel_i1e_p = _primitive("bessel_i1e", 1, chlo="chlo.bessel_i1e")


@family.function(binds=(regularized_incomplete_beta_p,))
def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)`` (``jax.lax.betainc``).

    NaN for ``a < 0``, ``b < 0``, ``x`` outside ``[0, 1]`` or ``a = b = 0``. Differentiable in ``x`` only
    (JAX's ``ValueError`` for ``a`` and ``b``).
    """
    return regularized_incomplete_beta_p.bind(*_broadcast_operands("betainc", (a, b, x)))


@family.function(binds=(igamma_p,))
def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)`` (``jax.lax.igamma``); NaN for ``a < 0``
    or ``x < 0``. Differentiable in both operands (``d/da`` is :func:`igamma_grad_a`)."""
    return igamma_p.bind(*_broadcast_operands("igamma", (a, x)))


@family.function(binds=(igammac_p,))
def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` (``jax.lax.igammac``)."""
    return igammac_p.bind(*_broadcast_operands("igammac", (a, x)))


@family.function(binds=(igamma_grad_a_p,))
def igamma_grad_a(a: Any, x: Any) -> Any:
    """``d/da`` of :func:`igamma` (``jax.lax.igamma_grad_a``); NaN for ``a <= 0`` or ``x < 0``. Not
    differentiable itself (JAX defines no rule)."""
    return igamma_grad_a_p.bind(*_broadcast_operands("igamma_grad_a", (a, x)))


@family.function
def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative of a ``Gamma(a, 1)`` sample ``x`` with respect to ``a`` (``jax.lax.random_gamma_grad``).

    Not a primitive (as in JAX): the incomplete-gamma expansion, traced inline.
    """
    a, x = _broadcast_operands("random_gamma_grad", (a, x))
    out = _nary_rule("random_gamma_grad")(*(aval_of(v) for v in (a, x)))
    # As arrays (not NumPy values), so every step is a toolkit op, eager or traced.
    a, x = (convert_element_type(v, out.dtype) for v in (a, x))
    return special_algorithms.upcast_half(special_algorithms.random_gamma_grad_expansion)(a, x)


@family.function(binds=(polygamma_p,))
def polygamma(m: Any, x: Any) -> Any:
    """The polygamma function ``psi^(m)(x)``, ``m`` a float holding a non-negative integer
    (``jax.lax.polygamma``; NaN otherwise). Differentiable in ``x`` only."""
    return polygamma_p.bind(*_broadcast_operands("polygamma", (m, x)))


@family.function(binds=(zeta_p,))
def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q)**-x`` (``jax.lax.zeta``); not differentiable at the lax
    level, as in JAX (``toolkit.scipy.special.zeta`` is)."""
    return zeta_p.bind(*_broadcast_operands("zeta", (x, q)))


@family.function(binds=(bessel_i0e_p,))
def bessel_i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)`` (``jax.lax.bessel_i0e``)."""
    return bessel_i0e_p.bind(x)


@family.function(binds=(bessel_i1e_p,))
def bessel_i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)`` (``jax.lax.bessel_i1e``)."""
    return bessel_i1e_p.bind(x)
