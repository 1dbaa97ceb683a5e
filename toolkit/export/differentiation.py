"""Differentiating through ``Exported.call``: the exported VJP as the call's derivative.

The embedded module cannot be differentiated (it is opaque StableHLO), so, as
JAX does, a call of an ``Exported`` that carries a VJP (``has_vjp()``: a
fresh toolkit export, or a blob serialized with ``vjp_order >= 1``) is
differentiated with ``Exported.vjp()`` — a custom VJP:

* **reverse mode** (``grad``, ``vjp``, ``value_and_grad``): the forward pass
  is the call itself, keeping its arguments; the backward pass calls the VJP
  export on ``(*arguments, *output cotangents)``. Output cotangents that are
  symbolic zeros are passed as zeros; float0 ones (integer outputs) as boolean
  zeros, the module form of float0; the float0 cotangents it returns for
  integer arguments become toolkit's symbolic zeros.
* **forward mode** (``jvp``, ``linearize``): JAX refuses (a custom VJP has no
  JVP). toolkit computes ``J·t`` from the VJP of the VJP, when the artifact
  has it (``vjp_order >= 2``): the VJP function ``(x, c) -> Jᵀc`` is linear in
  ``c``, so its own VJP with cotangent ``t`` for its result gives ``J·t`` as
  the cotangent of ``c``.

The rules live here rather than in ``toolkit/ad/rules`` because
``toolkit.ad`` may not import ``toolkit.export``; importing
``toolkit.export.call`` attaches them to ``call_exported_p``, handing in how
to bind it (so this module sits below ``call``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from toolkit.ad.jvp import DifferentiationError
from toolkit.ad.registry import JVP_RULES, VJP_RULES
from toolkit.ad.values import Zero, instantiate, is_differentiable, tangent_aval, value_aval
from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.primitive import Primitive
from toolkit.export.exported import Exported

#: ``call(exported, args)``: the outputs of ``call_exported_p`` bound on ``args`` for ``exported``.
BindCall = Callable[[Exported, Sequence[Any]], list[Any]]


def _vjp_of(exported: Exported, mode: str) -> Exported:
    """``exported.vjp()``, computed once per ``Exported`` (a fresh toolkit export re-traces on every call)."""
    cached = exported.__dict__.get("_toolkit_vjp")
    if cached is None:
        if not exported.has_vjp():
            raise DifferentiationError(
                f"toolkit.ad: cannot differentiate ({mode}) through the call of the exported function "
                f"{exported.fun_name!r}: it has no VJP. Serialize it with vjp_order >= 1 "
                "(Exported.serialize(vjp_order=1), in toolkit or JAX), or differentiate a fresh export.")
        cached = exported.vjp()
        object.__setattr__(exported, "_toolkit_vjp", cached)  # frozen dataclass: a private cache
    return cached


def _module_zeros(aval: Any) -> Any:
    """Zeros of ``aval`` as the module takes them: boolean zeros for float0."""
    if aval.dtype == dtypes.float0:
        aval = ShapedArray(aval.shape, dtypes.bool_)
    return instantiate(Zero(aval))


def _module_cotangents(values: Sequence[Any], expected: Sequence[Any]) -> list[Any]:
    """Cotangents for a VJP export's cotangent parameters: symbolic zeros and float0 ones materialized.

    Their shapes are the call site's (a ``Zero``'s aval, or the value's), not
    the export's: those may hold dimension variables the caller never binds.
    """
    out = []
    for value, aval in zip(values, expected):
        if aval.dtype == dtypes.float0 or isinstance(value, Zero) or value is None:
            shape = value.aval.shape if isinstance(value, Zero) else getattr(value, "shape", aval.shape)
            out.append(_module_zeros(ShapedArray(shape, aval.dtype)))
        else:
            out.append(value)
    return out


# --- reverse mode --------------------------------------------------------------------


def _vjp_forward(call: BindCall, primals: Sequence[Any], active: Sequence[bool], *,
                 exported: Any) -> tuple[list[Any], Any]:
    # The residuals are the arguments, as JAX keeps them (the VJP export recomputes what it needs).
    return call(exported.exported, primals), list(primals)


def _vjp_backward(call: BindCall, residuals: Sequence[Any], active: Sequence[bool], cotangents: Sequence[Any], *,
                  exported: Any) -> list[Any]:
    exp = exported.exported
    vjp = _vjp_of(exp, "reverse mode")
    num_args = len(exp.in_avals)
    cts = _module_cotangents(cotangents, vjp.in_avals[num_args:])
    in_cts = call(vjp, list(residuals) + cts)
    result: list[Any] = []
    for is_active, ct, aval, primal in zip(active, in_cts, vjp.out_avals, residuals):
        if not is_active:
            result.append(None)
        elif aval.dtype == dtypes.float0 or not is_differentiable(value_aval(primal)):
            result.append(Zero(tangent_aval(value_aval(primal))))
        else:
            result.append(ct)
    return result


# --- forward mode --------------------------------------------------------------------


def _jvp(call: BindCall, primals: Sequence[Any], tangents: Sequence[Any], *,
         exported: Any) -> tuple[list[Any], list[Any]]:
    exp = exported.exported
    outs = call(exp, primals)
    vjp = _vjp_of(exp, "forward mode")
    if not vjp.has_vjp():
        raise DifferentiationError(
            f"toolkit.ad: forward-mode differentiation (jvp, linearize) through the call of the exported function "
            f"{exp.fun_name!r} needs the VJP of its VJP, which this artifact does not have: serialize it with "
            "vjp_order >= 2 (JAX cannot forward-differentiate Exported.call at all), or use reverse mode.")
    vjp2 = _vjp_of(vjp, "forward mode")
    num_args, num_outs = len(exp.in_avals), len(exp.out_avals)
    # (x, c) -> Jᵀc is linear in c: any c will do; zeros.
    cts = _module_cotangents([Zero(value_aval(o)) for o in outs], vjp.in_avals[num_args:])
    directions = _module_cotangents(tangents, vjp2.in_avals[num_args + num_outs:])
    results = call(vjp2, list(primals) + cts + directions)
    out_tangents = []
    for out, tangent in zip(outs, results[num_args:]):
        aval = value_aval(out)
        out_tangents.append(tangent if is_differentiable(aval) else Zero(tangent_aval(aval)))
    return outs, out_tangents


def attach(primitive: Primitive, call: BindCall) -> None:
    """Give ``primitive`` (``call_exported_p``) its JVP and VJP rules; ``call`` binds it for an ``Exported``."""
    JVP_RULES[primitive] = functools.partial(_jvp, call)
    VJP_RULES[primitive] = (functools.partial(_vjp_forward, call), functools.partial(_vjp_backward, call))


__all__ = ["attach"]
