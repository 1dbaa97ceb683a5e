"""``log(exp(x) + exp(y))`` and its base-2 form without overflow, real and complex, as JAX computes them.

JAX's ``jax._src.lax.other.logaddexp``/``logaddexp2`` (what ``jnp.logaddexp``, ``jnp.logaddexp2`` and
``lax.cumlogsumexp`` use), op for op, so results agree bit for bit: for real operands the larger one plus
``log1p(exp(-|x - y|))``, with ``x + y`` where ``x - y`` is NaN (NaNs, or infinities of one sign); for complex
ones the larger by JAX's lexicographic order plus ``log1p(exp(x + y - 2 max))``, the imaginary part wrapped into
``[-pi, pi]`` (``[-pi/log 2, pi/log 2]`` in base 2).

Each is, as JAX's, a custom-JVP function: inside a trace it binds ``custom_jvp_call`` with JAX's rule
``d/dx = exp(x - out)`` (``exp2`` in base 2), where ``+inf`` operands and outputs count as 0 in the exponent
(JAX's ``_replace_inf``). So derivatives at infinities are JAX's (``grad`` at ``(+inf, 1)`` is ``(1, e)``, at
``(+inf, +inf)`` ``(1, 1)``, not the NaN the formula's own derivative gives), and finite ones round as JAX's.
Eagerly nothing can differentiate the value, and the formula runs as it is.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from toolkit.core import dtypes, tracing
from toolkit.core.avals import aval_of
from toolkit.lax import calls, control_flow
from toolkit.lax import elementwise as lax
from toolkit.lax import structural


def _wrap_between(x: Any, bound: float) -> Any:
    """``x`` wrapped into ``[-bound, bound]`` (JAX's ``_wrap_between``)."""
    shifted = lax.rem(lax.add(x, structural.typed_scalar(x, bound)), structural.typed_scalar(x, 2 * bound))
    shifted = lax.select(lax.lt(shifted, structural.typed_scalar(x, 0)), lax.add(shifted, structural.typed_scalar(x, 2 * bound)), shifted)
    return lax.sub(shifted, structural.typed_scalar(x, bound))


def _checked(name: str, x: Any, y: Any) -> np.dtype:
    dtype, other = aval_of(x).dtype, aval_of(y).dtype
    if dtype != other:
        raise TypeError(f"{name} requires operands of one dtype, got {dtype.name} and {other.name}")
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype.name}")
    return dtype


def _logaddexp_value(x: Any, y: Any) -> Any:
    """The value of :func:`logaddexp` (JAX's formula, op for op)."""
    dtype = aval_of(x).dtype
    amax = lax.max(x, y)
    if not dtypes.is_complex(dtype):
        delta = lax.sub(x, y)
        return lax.select(lax.ne(delta, delta), lax.add(x, y),
                          lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))
    delta = lax.sub(lax.add(x, y), lax.mul(amax, structural.typed_scalar(amax, 2)))
    out = lax.add(amax, lax.log1p(lax.exp(delta)))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi))


def _logaddexp2_value(x: Any, y: Any) -> Any:
    """The value of :func:`logaddexp2` (JAX's formula, op for op)."""
    dtype = aval_of(x).dtype
    amax = lax.max(x, y)
    inverse_log2 = structural.typed_scalar(amax, 1 / np.log(2))
    if not dtypes.is_complex(dtype):
        delta = lax.sub(x, y)
        return lax.select(lax.ne(delta, delta), lax.add(x, y),
                          lax.add(amax, lax.mul(inverse_log2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))))
    delta = lax.sub(lax.add(x, y), lax.mul(amax, structural.typed_scalar(amax, 2)))
    out = lax.add(amax, lax.mul(inverse_log2, lax.log1p(lax.exp2(delta))))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi / np.log(2)))


# --- JAX's custom JVP -------------------------------------------------------------------------------------------


def _replace_inf(x: Any) -> Any:
    """``x`` with 0 where it (its real part, for complex ``x``) is ``+inf`` (JAX's ``_replace_inf``): so the rule's
    ``exp(x - out)`` is ``exp(0 - 0) = 1`` where both are ``+inf``, not ``exp(nan)``."""
    real = lax.real(x) if dtypes.is_complex(aval_of(x).dtype) else x
    # Constants of the operand's shape (a 0-d one does not broadcast against a symbolic dimension).
    return lax.select(lax.eq(real, structural.full_like(real, np.inf)), structural.full_like(x, 0), x)


def _rule(value: Callable[[Any, Any], Any], exp: Callable[[Any], Any]) -> Callable[..., tuple[Any, Any]]:
    """JAX's JVP of ``value`` (``logaddexp`` with ``exp``, ``logaddexp2`` with ``exp2``):
    ``t_x exp(x - out) + t_y exp(y - out)``, infinities replaced as :func:`_replace_inf` does."""
    def jvp(x: Any, y: Any, tx: Any, ty: Any) -> tuple[Any, Any]:
        out = value(x, y)
        weight_x = exp(lax.sub(_replace_inf(x), _replace_inf(out)))
        weight_y = exp(lax.sub(_replace_inf(y), _replace_inf(out)))
        return out, lax.add(lax.mul(tx, weight_x), lax.mul(ty, weight_y))
    return jvp


def _with_custom_jvp(value: Callable[[Any, Any], Any], rule_name: str, exp: Callable[[Any], Any],
                     x: Any, y: Any) -> Any:
    """``value(x, y)``; inside a trace a ``custom_jvp_call`` of it carrying JAX's rule (what ``jax.custom_jvp``
    binds for JAX's ``logaddexp``): its value lowers as ``value``'s operations, inline, so results are unchanged;
    forward and reverse mode and ``vmap`` of them use the rule."""
    if not tracing.is_tracing():
        return value(x, y)  # eagerly nothing can differentiate the value
    avals = [aval_of(x), aval_of(y)]
    tangent_avals = [a.strip_weak_type() for a in avals]
    rule = _rule(value, exp)
    traced = [tracing.trace_flat(lambda a, b: [value(a, b)], avals),
              tracing.trace_flat(lambda a, b, ta, tb: list(rule(a, b, ta, tb)), avals + tangent_avals)]
    (call, jvp_program), captured = control_flow.common_captured(traced, [2, 4])
    out, = calls.custom_jvp_call_p.bind(x, y, *captured, call=call, jvp=calls.JVPRule(rule_name, jvp_program, None),
                                        num_consts=len(captured), symbolic_zeros=False)
    return out


def logaddexp(x: Any, y: Any) -> Any:
    """``log(exp(x) + exp(y))`` of two operands of one floating or complex dtype, with JAX's custom JVP."""
    _checked("logaddexp", x, y)
    return _with_custom_jvp(_logaddexp_value, "_logaddexp_jvp", lax.exp, x, y)


def logaddexp2(x: Any, y: Any) -> Any:
    """``log2(exp2(x) + exp2(y))`` of two operands of one floating or complex dtype, with JAX's custom JVP."""
    _checked("logaddexp2", x, y)
    return _with_custom_jvp(_logaddexp2_value, "_logaddexp2_jvp", lax.exp2, x, y)
