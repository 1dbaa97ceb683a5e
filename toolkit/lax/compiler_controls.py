"""Primitives that ask XLA for something other than arithmetic, each one StableHLO op as in JAX 0.10.2.

- ``reduce_precision``: round floats to a narrower format (``stablehlo.reduce_precision``);
- ``optimization_barrier``: values pass through unchanged but XLA may not move, fuse or CSE
  computations across it (``stablehlo.optimization_barrier``);
- ``rng_uniform``: XLA's stateful uniform generator (``stablehlo.rng`` with ``UNIFORM``); the
  values are the backend's, not reproducible across platforms (JAX discourages it too);
- ``dce_sink``: an effectful use of a value with no results, so dead-code elimination keeps what
  computes it; it lowers to nothing (or, with ``prevent_mlir_dce=True``, to a side-effecting
  ``stablehlo.custom_call @dce_sink`` that MLIR's DCE keeps too).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from toolkit.core import dtypes, pytrees, tracing
from toolkit.core.avals import ShapedArray, aval_of, canonicalize_shape
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("compiler_controls")

__all__ = ["dce_sink", "optimization_barrier", "reduce_precision", "rng_uniform"]


def _reduce_precision_rule(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int) -> ShapedArray:
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes "
                        "of floating.")
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be at least 1, got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative, got {mantissa_bits}")
    return x


reduce_precision_p = family.primitive("reduce_precision", shape_rule=_reduce_precision_rule)


@family.function(binds=(reduce_precision_p,))
def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to a float format of ``exponent_bits`` and ``mantissa_bits`` (XLA's ReducePrecision).

    Values keep their dtype; out-of-range values become infinities, as XLA does. Non-integer
    bit counts are a ``TypeError``, a non-float operand a ``TypeError``.
    """
    try:
        exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    except TypeError:
        raise TypeError("reduce_precision: exponent_bits and mantissa_bits must be Python integers, got "
                        f"{exponent_bits!r} and {mantissa_bits!r}") from None
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


def _optimization_barrier_rule(*xs: ShapedArray) -> list[ShapedArray]:
    return list(xs)


optimization_barrier_p = family.primitive("optimization_barrier", shape_rule=_optimization_barrier_rule,
                                          multiple_results=True)


@family.function(binds=(optimization_barrier_p,))
def optimization_barrier(operand: Any, /) -> Any:
    """The pytree ``operand`` unchanged, behind a barrier XLA does not optimize across (``jax.lax``'s).

    Prevents CSE, fusion and code motion between what feeds the barrier and what uses its
    outputs; outside a compiled function it has no effect.
    """
    leaves, tree = pytrees.tree_flatten(operand)
    if not leaves:
        return operand
    return pytrees.tree_unflatten(tree, list(optimization_barrier_p.bind(*leaves)))


def _rng_uniform_rule(a: ShapedArray, b: ShapedArray, *, shape: tuple) -> ShapedArray:
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and {b.shape}.")
    if not (dtypes.is_float(a.dtype) or dtypes.is_integer(a.dtype)):
        raise TypeError(f"rng_uniform: bounds must be integers or floats, got {a.dtype.name}")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


rng_uniform_p = family.primitive("rng_uniform", shape_rule=_rng_uniform_rule)


@family.function(binds=(rng_uniform_p,))
def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Uniform random values in ``[a, b)`` of ``shape`` from XLA's stateful generator (``jax.lax.rng_uniform``).

    ``a`` and ``b`` are scalars of one dtype. Results are backend-defined and not reproducible;
    use ``toolkit.random`` for reproducible numbers.
    """
    return rng_uniform_p.bind(a, b, shape=canonicalize_shape(shape))


def _dce_sink_rule(x: ShapedArray, *, prevent_mlir_dce: bool) -> list[ShapedArray]:
    return []


# Effectful (JAX's NoDCEEffect): an equation with no results that must stay in the program.
dce_sink_p = family.primitive("dce_sink", shape_rule=_dce_sink_rule, multiple_results=True, effectful=True)


@family.function(binds=(dce_sink_p,))
def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Mark every leaf of the pytree ``val`` as used, so dead-code elimination keeps its computation (``jax.lax``'s).

    Returns nothing. Each leaf becomes one ``dce_sink`` equation with no results; it lowers to
    nothing, unless ``prevent_mlir_dce`` asks for a side-effecting ``stablehlo.custom_call @dce_sink``
    per leaf, which XLA's and MLIR's DCE keep as well. Outside a trace it does nothing (as JAX's impl);
    a leaf that is not an array is a ``TypeError``. ``grad`` sees no use of the value; ``vmap`` keeps
    one sink of the batched value.
    """
    leaves = pytrees.tree_leaves(val)
    for leaf in leaves:  # one bind per leaf, so JAX names position 0 for any bad leaf
        if not isinstance(leaf, tracing.Tracer):
            try:
                aval_of(leaf)
            except TypeError:
                raise TypeError(f"Error interpreting argument to dce_sink as a JAX value. The problematic value is of "
                                f"type {type(leaf)} and was passed to dce_sink at position 0.") from None
    if not tracing.is_tracing() and not any(isinstance(leaf, tracing.Tracer) for leaf in leaves):
        return None  # nothing to keep alive between eager operations: JAX's impl does nothing either
    for leaf in leaves:
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))
    return None
