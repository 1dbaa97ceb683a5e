"""Elementwise primitives. Operands have equal shapes and dtypes (``toolkit.numpy``
broadcasts and promotes before it gets here); the result is weakly typed only
when every operand is. ``reciprocal`` is ``jax.lax``'s wrapper over ``integer_pow``.

Each op is declared once, on one line: :func:`unary`, :func:`binary` and :func:`compare` make the
primitive and its user function, and record the traits its other interpretations are derived from
(``kind``, ``hlo``, ``derivative``, ``direction``). Lowering, batching and sharding rules loop over
``family`` (``toolkit/{lowering,batching}/rules/elementwise.py``, ``toolkit/sharding_rules/elementwise.py``),
and so does the JVP where ``derivative`` says enough; ``toolkit.lax`` exports ``__all__``, which the
coverage test checks is ``family.functions``. Adding an op here (its line and its name in ``__all__``) and its
lit test in ``test/lit/lowering/elementwise.py`` is all it takes::

    cube_p, cube = unary("cube", FLOAT, derivative=lambda x: 3 * x * x)   # plus a lowering rule (no hlo=)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.primitive import Primitive
from toolkit.lax.dot_algorithms import AccuracyMode, Tolerance
from toolkit.lax.shape_rules import all_weak, check_dtype, same_dtypes, same_shapes

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("elementwise")

FLOAT, COMPLEX, INT, BOOL = "f", "c", "iu", "b"
NUMBER = "iufc"
INEXACT = "fc"


def _user_function(p: Primitive, name: str, broadcasts: bool = False, numbered: bool = False) -> Callable[..., Any]:
    """``name``'s user function with ``jax.lax``'s parameter names, so calls by keyword work: ``name(x)`` for a
    unary ``p``, ``name(x, y)`` for a binary one (``numbered``: ``name(x1, x2)``, as ``jax.lax.nextafter``)."""
    apply: Callable[..., Any]
    if broadcasts and numbered:
        def apply(x1: Any, x2: Any) -> Any:
            return p.bind(*_broadcast_operands(name, (x1, x2)))
    elif broadcasts:
        def apply(x: Any, y: Any) -> Any:
            return p.bind(*_broadcast_operands(name, (x, y)))
    else:
        def apply(x: Any) -> Any:
            return p.bind(x)
    doc = ("operands of equal dtypes and equal shapes, but for scalars and size-1 dimensions, which broadcast as "
           "in ``jax.lax``") if broadcasts else "operands of equal shapes and dtypes"
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"Elementwise ``{p.name}`` ({doc})."
    return family.function(apply, binds=(p,))


def _user_function_with_accuracy(p: Primitive, name: str) -> Callable[..., Any]:
    # jax.lax's transcendental functions take ``accuracy=``, a parameter of the primitive. JAX binds it always
    # (None by default) and leaves a None out when printing; here it is bound only when given, so a program
    # without it prints, caches and lowers as before.
    def apply(x: Any, *, accuracy: Tolerance | AccuracyMode | None = None) -> Any:
        if accuracy is None:
            return p.bind(x)
        try:
            hash(accuracy)
        except TypeError:
            # JAX's TypeError (its parameters must be hashable: jit's caches key on them)
            raise TypeError("parameters to primitives must have __hash__ and __eq__ methods. In a call to "
                            f"primitive {p.name}, the value of parameter accuracy was not hashable: {accuracy!r}"
                            ) from None
        return p.bind(x, accuracy=accuracy)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = (
        f"Elementwise ``{p.name}``.\n\n"
        "``accuracy``: None (the default: StableHLO's implementation), a :class:`toolkit.lax.AccuracyMode` or a\n"
        ":class:`toolkit.lax.Tolerance`, written on the op as StableHLO's ``result_accuracy`` attribute, as\n"
        "``jax.lax`` writes it (the compiler picks an implementation meeting it; XLA:CPU has one and ignores it).\n"
        "Another value is JAX's ``NotImplementedError`` when the op is lowered.")
    return family.function(apply, binds=(p,))


def _broadcast_operands(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``jax.lax``'s implicit broadcasting of an n-ary elementwise op's operands: a rank-0 operand (a Python
    scalar, a 0-d array) goes with any shape, and operands of one rank broadcast their size-1 dimensions.
    Different ranks otherwise, or sizes that differ and are not 1, are JAX's ``TypeError``s."""
    if len(args) == 2 and aval_of(args[0]).shape == aval_of(args[1]).shape:  # the common case, without lists
        return args
    avals = [aval_of(a) for a in args]
    shapes = [a.shape for a in avals]
    if all(s == shapes[0] for s in shapes[1:]):
        return args
    if not all(type(d) is int for s in shapes for d in s):
        return args  # symbolic dimensions: the primitive's shape rule checks them
    ranks = {len(s) for s in shapes if s}
    if len(ranks) > 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    rank = ranks.pop()
    target = []
    for axis in range(rank):
        sizes = {s[axis] for s in shapes if s and s[axis] != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(tuple(s)) for s in shapes)}.")
        target.append(sizes.pop() if sizes else 1)
    shape = tuple(target)
    # function-level: structural imports this module (its ops are built on convert_element_type)
    from toolkit.lax.structural import broadcast_in_dim
    out = []
    for a, aval in zip(args, avals):
        if aval.shape != shape:
            if dtypes.is_python_scalar(a):  # keeps its weak type, as the literal JAX binds would
                a = convert_element_type(np.asarray(a, aval.dtype), aval.dtype, weak_type=aval.weak_type)
            a = broadcast_in_dim(a, shape, tuple(range(len(aval.shape))))
        out.append(a)
    return tuple(out)


def unary(name: str, kinds: str, *, hlo: str | None = None, derivative: Any = None,
          function: str | None = None, accuracy: bool = False) -> tuple[Primitive, Callable[..., Any]]:
    """A unary primitive whose result has its operand's type, and its user function (``function`` or ``name``).

    Traits the interpretations derive rules from: ``hlo``, the StableHLO/CHLO op it lowers to one to one;
    ``derivative``, ``"zero"`` for a piecewise-constant op or ``f(x) -> df/dx`` written with ``toolkit.lax``
    (the JVP is ``t * f(x)``); without it, ``toolkit/ad/rules/elementwise.py`` registers the JVP beside.
    ``accuracy``: the user function takes jax.lax's ``accuracy=`` keyword, bound as the primitive's parameter
    ``accuracy`` when given (the lowering writes it as ``result_accuracy``).
    Batching keeps the batch dimension where it is; the sharding rule keeps the operand's spec.
    """
    def rule(x: ShapedArray, *, accuracy: Any = None) -> ShapedArray:
        check_dtype(name, x, kinds)
        return x
    traits = {"accuracy": True} if accuracy else {}
    p = family.primitive(name, shape_rule=rule, kind="unary", hlo=hlo, derivative=derivative, **traits)
    if accuracy:
        return p, _user_function_with_accuracy(p, function or name)
    return p, _user_function(p, function or name)


def binary(name: str, kinds: str, *, hlo: str | None = None, derivative: Any = None,
           function: str | None = None, numbered: bool = False) -> tuple[Primitive, Callable[..., Any]]:
    """A binary primitive over operands of equal shapes and dtypes, and its user function (parameters ``x, y``,
    or ``x1, x2`` when ``numbered``, JAX's names); traits as :func:`unary`."""
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        shape = same_shapes(name, x, y)
        dtype = same_dtypes(name, x, y)
        check_dtype(name, x, kinds)
        return ShapedArray(shape, dtype, all_weak(x, y))
    p = family.primitive(name, shape_rule=rule, kind="binary", hlo=hlo, derivative=derivative)
    return p, _user_function(p, function or name, broadcasts=True, numbered=numbered)


def compare(name: str, direction: str) -> tuple[Primitive, Callable[..., Any]]:
    """A comparison (``stablehlo.compare`` with ``direction``) giving bools, and its user function. Complex
    numbers have no order: only ``eq`` and ``ne`` take them (as ``jax.lax``; ``toolkit.numpy``'s comparisons
    order them lexicographically, as ``jax.numpy``'s)."""
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        shape = same_shapes(name, x, y)
        same_dtypes(name, x, y)
        if direction not in ("EQ", "NE"):
            check_dtype(name, x, BOOL + NUMBER.replace("c", ""))
        return ShapedArray(shape, dtypes.bool_, all_weak(x, y))  # weakly typed operands: a weak bool (JAX's)
    p = family.primitive(name, shape_rule=rule, kind="compare", direction=direction, derivative="zero")
    return p, _user_function(p, name, broadcasts=True)


_H, _C = "stablehlo.", "chlo."
neg_p, neg = unary("neg", NUMBER, hlo=_H + "negate")
sign_p, sign = unary("sign", NUMBER, derivative="zero")  # unsigned: not stablehlo.sign's (lowering rule)
floor_p, floor = unary("floor", FLOAT, hlo=_H + "floor", derivative="zero")
ceil_p, ceil = unary("ceil", FLOAT, hlo=_H + "ceil", derivative="zero")
exp_p, exp = unary("exp", INEXACT, hlo=_H + "exponential", accuracy=True)
exp2_p, exp2 = unary("exp2", INEXACT, accuracy=True)
log_p, log = unary("log", INEXACT, hlo=_H + "log", accuracy=True)
log1p_p, log1p = unary("log1p", INEXACT, hlo=_H + "log_plus_one", accuracy=True)
expm1_p, expm1 = unary("expm1", INEXACT, hlo=_H + "exponential_minus_one", accuracy=True)
tanh_p, tanh = unary("tanh", INEXACT, hlo=_H + "tanh", accuracy=True)
logistic_p, logistic = unary("logistic", INEXACT, hlo=_H + "logistic", accuracy=True)
sin_p, sin = unary("sin", INEXACT, accuracy=True)  # complex: JAX's formula (lowering rule), real: stablehlo.sine
cos_p, cos = unary("cos", INEXACT, accuracy=True)
tan_p, tan = unary("tan", INEXACT, hlo=_H + "tan", accuracy=True)
asin_p, asin = unary("asin", INEXACT, hlo=_C + "asin")
acos_p, acos = unary("acos", INEXACT, hlo=_C + "acos")
atan_p, atan = unary("atan", INEXACT, hlo=_C + "atan")
sinh_p, sinh = unary("sinh", INEXACT, hlo=_C + "sinh")
cosh_p, cosh = unary("cosh", INEXACT, hlo=_C + "cosh")
asinh_p, asinh = unary("asinh", INEXACT, hlo=_C + "asinh")
acosh_p, acosh = unary("acosh", INEXACT, hlo=_C + "acosh")
atanh_p, atanh = unary("atanh", INEXACT, hlo=_C + "atanh")
sqrt_p, sqrt = unary("sqrt", INEXACT, hlo=_H + "sqrt", accuracy=True)
rsqrt_p, rsqrt = unary("rsqrt", INEXACT, hlo=_H + "rsqrt", accuracy=True)
cbrt_p, cbrt = unary("cbrt", FLOAT, hlo=_H + "cbrt", accuracy=True)
not_p, bitwise_not = unary("not", BOOL + INT, hlo=_H + "not", derivative="zero", function="bitwise_not")
population_count_p, population_count = unary("population_count", INT, hlo=_H + "popcnt", derivative="zero")
clz_p, clz = unary("clz", INT, hlo=_H + "count_leading_zeros", derivative="zero")
erf_p, erf = unary("erf", FLOAT, hlo=_C + "erf")
erfc_p, erfc = unary("erfc", FLOAT, hlo=_C + "erfc")
erf_inv_p, erf_inv = unary("erf_inv", FLOAT, hlo=_C + "erf_inv")
lgamma_p, lgamma = unary("lgamma", FLOAT, hlo=_C + "lgamma")
digamma_p, digamma = unary("digamma", FLOAT, hlo=_C + "digamma")

def _conj_rule(x: ShapedArray) -> ShapedArray:
    check_dtype("conj", x, COMPLEX)
    return x


conj_p = family.primitive("conj", shape_rule=_conj_rule, kind="unary", hlo=_C + "conj")


def _is_finite_rule(x: ShapedArray) -> ShapedArray:
    check_dtype("is_finite", x, FLOAT)
    return ShapedArray(x.shape, dtypes.bool_, x.weak_type)  # weak for a weak operand, as JAX's


is_finite_p = family.primitive("is_finite", shape_rule=_is_finite_rule, kind="unary", hlo=_H + "is_finite",
                                derivative="zero")
is_finite = _user_function(is_finite_p, "is_finite")


def _round_rule(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    check_dtype("round", x, FLOAT)
    return x


round_p = family.primitive("round", shape_rule=_round_rule, kind="unary", derivative="zero")


def _abs_rule(x: ShapedArray) -> ShapedArray:
    if dtypes.kind_of(x.dtype) not in "ifc":  # StableHLO's abs has no unsigned integers: JAX's TypeError
        raise TypeError(f"abs does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating, "
                        "complexfloating, signedinteger.")
    if dtypes.is_complex(x.dtype):
        return ShapedArray(x.shape, dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64, x.weak_type)
    return x


abs_p = family.primitive("abs", shape_rule=_abs_rule, kind="unary", hlo=_H + "abs")
abs = _user_function(abs_p, "abs")


def _complex_part_rule(name: str):
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype(name, x, COMPLEX)
        return ShapedArray(x.shape, dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64, x.weak_type)
    return rule


real_p = family.primitive("real", shape_rule=_complex_part_rule("real"), kind="unary", hlo=_H + "real")
real = _user_function(real_p, "real")
imag_p = family.primitive("imag", shape_rule=_complex_part_rule("imag"), kind="unary", hlo=_H + "imag")
imag = _user_function(imag_p, "imag")


add_p, add = binary("add", NUMBER, hlo=_H + "add")
sub_p, sub = binary("sub", NUMBER, hlo=_H + "subtract")


def _check_mul_operands(*avals: ShapedArray) -> None:
    # JAX's naryop dtype rule checks each operand (numeric) even when out_dtype is given
    for position, aval in enumerate(avals):
        if dtypes.kind_of(aval.dtype) not in NUMBER:
            raise TypeError(f"mul does not accept dtype {aval.dtype.name} at position {position}. Accepted dtypes "
                            f"at position {position} are subtypes of integer, floating, complexfloating.")


def _mul_rule(x: ShapedArray, y: ShapedArray, *, out_dtype: np.dtype | None = None) -> ShapedArray:
    # JAX's mul_p: operands of one numeric dtype, or, with the parameter out_dtype, of any numeric dtypes
    # (each checked by JAX's naryop dtype rule) and a result of out_dtype. Weak only when both operands are.
    shape = same_shapes("mul", x, y)
    if out_dtype is None:
        dtype = same_dtypes("mul", x, y)
        check_dtype("mul", x, NUMBER)
        return ShapedArray(shape, dtype, all_weak(x, y))
    _check_mul_operands(x, y)
    return ShapedArray(shape, out_dtype, all_weak(x, y))


# The parameter out_dtype is present only when the user gave one (JAX binds None otherwise), so programs
# without it print, cache and lower as before; the lowering converts both operands to it, then multiplies.
mul_p = family.primitive("mul", shape_rule=_mul_rule, kind="binary", hlo=_H + "multiply")
_mul_same_dtypes = _user_function(mul_p, "mul", broadcasts=True)


@family.function(name="mul")  # replaces the plain user function above (binds mul_p, as that one)
def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """Elementwise ``x * y``.

    ``out_dtype`` (``jax.lax.mul``'s): None, or the result's dtype; then the operands, of any numeric dtypes
    (not necessarily equal), are bound with the primitive's parameter ``out_dtype`` (canonicalized), which
    lowers as JAX's: a ``stablehlo.convert`` of each operand to it, then ``stablehlo.multiply`` (for bool,
    multiply of ``i1``, a logical and). The result is weakly typed only when both operands are. Its
    gradient multiplies the cotangent by the other operand with ``out_dtype`` the operand's dtype, as JAX's
    transpose rule, so both factors are converted before the product is rounded.
    """
    if out_dtype is None:
        return _mul_same_dtypes(x, y)
    dtype = dtypes.canonicalize_dtype(out_dtype)  # JAX's input_dtype rule: canonicalized, without a warning
    _check_mul_operands(aval_of(x), aval_of(y))  # before broadcasting, as JAX's
    return mul_p.bind(*_broadcast_operands("mul", (x, y)), out_dtype=dtype)


# jax.lax.square is a primitive of its own: chlo.square for floats and complex numbers (for a complex one,
# (a - b)(a + b) + 2abi, which rounds unlike x * x), a multiply for integers (lowering rule). JAX's JVP: t * (2 * x).
square_p, square = unary("square", NUMBER, derivative=lambda x: mul(np.asarray(2, aval_of(x).dtype), x))
div_p, div = binary("div", NUMBER, hlo=_H + "divide")
rem_p, rem = binary("rem", INT + FLOAT, hlo=_H + "remainder")  # (XLA CPU crashes on a complex one)


def _pow_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    # JAX's: a floating or complex base; an exponent of its dtype or of any integer dtype (the lowering
    # converts it to the base's).
    if dtypes.kind_of(x.dtype) not in INEXACT:
        raise TypeError(f"pow does not accept dtype {x.dtype.name} at position 0. Accepted dtypes at position 0 are "
                        "subtypes of floating, complexfloating.")
    if y.dtype != x.dtype and dtypes.kind_of(y.dtype) not in INT:
        raise TypeError("the first argument to pow must have an inexact dtype (float or complex), and the second "
                        "argument must have an inexact or integer dtype, and two inexact dtypes must match, but got "
                        f"{x.dtype.name} and {y.dtype.name}.")
    return ShapedArray(same_shapes("pow", x, y), x.dtype, all_weak(x, y))


pow_p = family.primitive("pow", shape_rule=_pow_rule, kind="binary")
pow = _user_function(pow_p, "pow", broadcasts=True)


max_p, max = binary("max", BOOL + NUMBER)  # complex: lexicographic, as JAX's (lowering rule)
min_p, min = binary("min", BOOL + NUMBER)
and_p, bitwise_and = binary("and", BOOL + INT, hlo=_H + "and", derivative="zero", function="bitwise_and")
or_p, bitwise_or = binary("or", BOOL + INT, hlo=_H + "or", derivative="zero", function="bitwise_or")
xor_p, bitwise_xor = binary("xor", BOOL + INT, hlo=_H + "xor", derivative="zero", function="bitwise_xor")
atan2_p, atan2 = binary("atan2", INEXACT, hlo=_H + "atan2")
nextafter_p, nextafter = binary("nextafter", FLOAT, hlo=_C + "next_after", derivative="zero", numbered=True)
shift_left_p, shift_left = binary("shift_left", INT, hlo=_H + "shift_left", derivative="zero")
shift_right_arithmetic_p, shift_right_arithmetic = binary("shift_right_arithmetic", INT,
                                                          hlo=_H + "shift_right_arithmetic", derivative="zero")
shift_right_logical_p, shift_right_logical = binary("shift_right_logical", INT, hlo=_H + "shift_right_logical",
                                                    derivative="zero")
# jax.lax.mulhi: the high half of the double-width product (JAX 0.10.2 lowers it to chlo.mulhi, as here)
mulhi_p, mulhi = binary("mulhi", INT, hlo=_C + "mulhi", derivative="zero")


def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    shape = same_shapes("complex", x, y)
    dtype = same_dtypes("complex", x, y)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex requires float32 or float64 operands, got {dtype.name}")
    return ShapedArray(shape, dtypes.complex64 if dtype == dtypes.float32 else dtypes.complex128, all_weak(x, y))


complex_p = family.primitive("complex", shape_rule=_complex_rule, kind="binary", hlo=_H + "complex")
complex = _user_function(complex_p, "complex", broadcasts=True)


@family.function(binds=(conj_p, complex_p))
def conj(x: Any) -> Any:
    """Elementwise complex conjugate. A float32 or float64 operand gives its complex type with a zero imaginary
    part (``complex(x, 0)``, as ``jax.lax.conj`` lowers it); other real types are a ``TypeError``, as in JAX."""
    aval = aval_of(x)
    if dtypes.is_complex(aval.dtype):
        return conj_p.bind(x)
    if aval.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"conj does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of float32, "
                        "complexfloating, float64.")
    from toolkit.lax.structural import full_like  # function-level: structural imports this module
    return complex_p.bind(x, full_like(x, 0))

eq_p, eq = compare("eq", "EQ")
ne_p, ne = compare("ne", "NE")
lt_p, lt = compare("lt", "LT")
le_p, le = compare("le", "LE")
gt_p, gt = compare("gt", "GT")
ge_p, ge = compare("ge", "GE")


def _integer_pow_rule(x: ShapedArray, *, y: int) -> ShapedArray:
    check_dtype("integer_pow", x, NUMBER)
    if y < 0 and (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
        # JAX's TypeError and words (the aval printed as JAX prints it: int32[3]).
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({str(x).lstrip('~')}, {y})")
    return x


integer_pow_p = family.primitive("integer_pow", shape_rule=_integer_pow_rule, kind="unary")


def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n needs at least one case")
    shape = same_shapes("select_n", *cases)
    dtype = same_dtypes("select_n", *cases)
    if which.shape not in ((), shape):
        raise TypeError(f"select_n: the selector's shape {which.shape} must be () or the cases' shape {shape}")
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"select_n: the selector must be bool or int32, got {which.dtype.name}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("select_n: a bool selector chooses between at most two cases")
    return ShapedArray(shape, dtype, all_weak(*cases))


select_n_p = family.primitive("select_n", shape_rule=_select_n_rule)


def _clamp_rule(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for name, bound in (("min", lo), ("max", hi)):
        if bound.dtype != x.dtype:
            raise TypeError(f"clamp: the {name} bound's dtype {bound.dtype.name} differs from the operand's {x.dtype.name}")
        if bound.shape not in ((), x.shape):
            raise TypeError(f"clamp: the {name} bound's shape {bound.shape} must be () or the operand's {x.shape}")
    weak = all_weak(lo, x, hi)  # JAX's: weak only when all three are (a weak x between strong bounds is strong)
    return x if x.weak_type == weak else ShapedArray(x.shape, x.dtype, weak)


clamp_p = family.primitive("clamp", shape_rule=_clamp_rule)


def _convert_rule(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool = False) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = family.primitive("convert_element_type", shape_rule=_convert_rule, kind="unary")


def _bitcast_rule(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    # JAX's shape rule (item sizes in bits: a bool is 8), then its dtype rule, with their errors.
    old, new = _itemsize_bits(x.dtype), _itemsize_bits(new_dtype)
    if old > new:
        shape = (*x.shape, old // new)
    elif old < new:
        size = x.shape[-1] if x.shape else 1
        if size * old != new:
            raise ValueError(f"Attempting to convert array of shape {x.shape} from {x.dtype} of size {old} bits to "
                             f"{new_dtype} of size {new}, bits but {size} * {old} != {new}")
        shape = x.shape[:-1]
    else:
        shape = x.shape
    if x.dtype != new_dtype and any(dtypes.is_bool(d) or dtypes.is_complex(d) for d in (x.dtype, new_dtype)):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless the operand and "
                        f"destination types match. Got operand dtype={x.dtype}, new_dtype={new_dtype!r}. Consider "
                        "using the arr.view() method instead.")
    return ShapedArray(shape, new_dtype)


def _itemsize_bits(dtype: np.dtype) -> int:
    """JAX's ``itemsize_bits``: a sub-byte type's width, else the item size in bytes times 8 (a bool: 8)."""
    return dtypes.bit_width(dtype) if dtypes.bit_width(dtype) < 8 and dtype != dtypes.bool_ else dtype.itemsize * 8


bitcast_convert_type_p = family.primitive("bitcast_convert_type", shape_rule=_bitcast_rule, derivative="zero")


# --- user-level functions with parameters (lax semantics: no implicit broadcasting) ----------

@family.function(binds=(round_p,))
def round(x: Any, rounding_method: int = 0) -> Any:
    """Round to nearest; ``rounding_method`` 0 rounds halves away from zero, 1 to even."""
    return round_p.bind(x, rounding_method=int(rounding_method))


@family.function(binds=(integer_pow_p,))
def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static integer ``y``."""
    return integer_pow_p.bind(x, y=int(y))


@family.function(binds=(select_n_p,))
def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise; ``which`` is bool (two cases) or int32."""
    return select_n_p.bind(which, *cases)


@family.function(binds=(select_n_p,))
def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false``."""
    return select_n_p.bind(pred, on_false, on_true)


@family.function(binds=(clamp_p,))
def clamp(min: Any, x: Any, max: Any) -> Any:
    """``x`` limited to ``[min, max]`` (bounds of ``x``'s shape, or scalars; JAX's parameter names)."""
    return clamp_p.bind(min, x, max)


@family.function(binds=(convert_element_type_p,))
def convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """``operand`` converted to ``new_dtype`` (``weak_type``, toolkit's: the result is weakly typed)."""
    # With x64 off a 64-bit new_dtype is truncated to 32 bits, with JAX's warning.
    new_dtype = dtypes.canonicalize_explicit_dtype(new_dtype, "convert_element_type")
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))


@family.function(binds=(bitcast_convert_type_p,))
def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (adding or removing a last dimension when widths
    differ)."""
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


# --- jax.lax's wrappers over these primitives (user functions that bind no primitive of their own) ----------

@family.function
def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x`` (``integer_pow(x, -1)``: integers raise ``TypeError``, as in JAX)."""
    aval = aval_of(x)
    if dtypes.is_integer(aval.dtype) or dtypes.is_bool(aval.dtype):
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({aval}, -1)")
    return integer_pow(x, -1)


#: The family's user functions, what ``toolkit.lax`` exports (spelled out for type checkers; the coverage
#: test checks it is exactly ``family.functions``).
__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitcast_convert_type",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clamp", "clz", "complex",
    "conj", "convert_element_type", "cos", "cosh", "digamma", "div", "eq", "erf", "erf_inv", "erfc", "exp",
    "exp2", "expm1", "floor", "ge", "gt", "imag", "integer_pow", "is_finite", "le", "lgamma", "log", "log1p",
    "logistic", "lt", "max", "min", "mul", "mulhi", "ne", "neg", "nextafter", "population_count", "pow", "real",
    "reciprocal", "rem", "round", "rsqrt", "select", "select_n", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
]
