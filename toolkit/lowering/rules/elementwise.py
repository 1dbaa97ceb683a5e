"""StableHLO (and CHLO) for the elementwise primitives of ``toolkit.lax.elementwise``."""

from __future__ import annotations

import math

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.lax import elementwise
from toolkit.lax.dot_algorithms import AccuracyMode, Tolerance
from toolkit.lowering.registry import register_lowering


def accuracy_attribute(accuracy: object) -> ir.Attribute | None:
    """StableHLO's ``result_accuracy`` for a unary op's ``accuracy`` parameter, as JAX's ``accuracy_attr``: none
    for None; a mode (``HIGHEST``, ``DEFAULT``) with zero tolerances; a :class:`Tolerance` as mode ``TOLERANCE``.
    Anything else is JAX's ``NotImplementedError``."""
    if accuracy is None:
        return None
    if isinstance(accuracy, AccuracyMode):
        return stablehlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.name)
    if isinstance(accuracy, Tolerance):
        return stablehlo.ResultAccuracyAttr.get(atol=accuracy.atol, rtol=accuracy.rtol, ulps=accuracy.ulps,
                                                mode="TOLERANCE")
    raise NotImplementedError(f"Accuracy {accuracy} not supported")


def _with_accuracy(op: ir.OpView, accuracy: object) -> ir.Value:
    # JAX writes the attribute only for a truthy accuracy (so 0 is no accuracy, not an error: JAX's quirk).
    if accuracy:
        op.operation.attributes["result_accuracy"] = accuracy_attribute(accuracy)
    return op.result


def _one_to_one(op_name: str):
    # The result type is given, not inferred: CHLO ops infer poorly, and abs/real/imag/complex/is_finite
    # change the type.
    def rule(ctx, *operands):
        return ir.Operation.create(op_name, results=[ctx.out_type], operands=list(operands)).result
    rule.__name__ = f"lower_{op_name.replace('.', '_')}"
    return rule


def _one_to_one_with_accuracy(op_name: str):
    # A unary op taking ``accuracy=`` (the primitive's parameter, present only when given).
    def rule(ctx, x, *, accuracy=None):
        return _with_accuracy(ir.Operation.create(op_name, results=[ctx.out_type], operands=[x]).opview, accuracy)
    rule.__name__ = f"lower_{op_name.replace('.', '_')}"
    return rule


@register_lowering(elementwise.exp2_p)
def _exp2(ctx, x, *, accuracy=None):
    # 2**x = exp(x * ln 2); JAX converts accuracy unconditionally here (a falsy non-None value is its error too).
    ln2 = ctx.constant(math.log(2.0), ctx.avals_in[0].update(shape=()))
    ln2 = ctx.broadcast(ln2, ctx.avals_out[0])
    exp = stablehlo.ExpOp(stablehlo.MulOp(x, ln2).result)
    attribute = accuracy_attribute(accuracy)
    if attribute is not None:
        exp.operation.attributes["result_accuracy"] = attribute
    return exp.result


@register_lowering(elementwise.logistic_p)
def _logistic(ctx, x, *, accuracy=None):
    # JAX lowers logistic as 1 / (1 + exp(-x)) and drops accuracy: no attribute, and no value is an error.
    del accuracy
    return stablehlo.LogisticOp(x).result


@register_lowering(elementwise.mul_p)
def _mul(ctx, x, y, *, out_dtype=None):
    # JAX's: with out_dtype, a stablehlo.convert of each operand to the result's type (written even when the
    # operand has it already), then the multiply (of i1 values for bool: their logical and).
    if out_dtype is not None:
        x, y = (stablehlo.ConvertOp(ctx.out_type, operand).result for operand in (x, y))
    return stablehlo.MulOp(x, y).result


@register_lowering(elementwise.round_p)
def _round(ctx, x, *, rounding_method):
    return (stablehlo.RoundNearestEvenOp(x) if rounding_method == 1 else stablehlo.RoundOp(x)).result


@register_lowering(elementwise.sign_p)
def _sign(ctx, x):
    # stablehlo.sign takes signed integers, floats and complex numbers; an unsigned one is x != 0 (JAX's).
    aval = ctx.avals_in[0]
    if not dtypes.is_unsigned(aval.dtype):
        return stablehlo.SignOp(x).result
    zero = ctx.broadcast(ctx.constant(0, aval.update(shape=())), aval)
    nonzero = stablehlo.CompareOp(x, zero, stablehlo.ComparisonDirectionAttr.get("NE"),
                                  compare_type=stablehlo.ComparisonTypeAttr.get("UNSIGNED")).result
    return stablehlo.ConvertOp(ctx.out_type, nonzero).result


def _trig_rule(op, cosine: bool):
    # A complex sine or cosine from real parts, as JAX lowers them: sinh and cosh through expm1, so a tiny
    # imaginary part survives (sin(1e-30j) is 1e-30j; stablehlo.sine on XLA CPU gives 0, which breaks
    # complex-step derivatives), and no NaN from inf * 0 when the real part is 0.
    def rule(ctx, x, *, accuracy=None):
        # A real operand's op takes accuracy (result_accuracy); JAX's complex formula drops it.
        aval = ctx.avals_in[0]
        if not dtypes.is_complex(aval.dtype):
            return _with_accuracy(op(x), accuracy)
        part = aval.update(dtype=dtypes.float32 if aval.dtype == dtypes.complex64 else dtypes.float64)

        def constant(value):
            return ctx.broadcast(ctx.constant(value, part.update(shape=())), part)
        a, b = stablehlo.RealOp(x).result, stablehlo.ImagOp(x).result
        zero, two = constant(0), constant(2)
        sn, cs = stablehlo.SineOp(a).result, stablehlo.CosineOp(a).result
        e1m = stablehlo.Expm1Op(b).result
        e2m = stablehlo.Expm1Op(stablehlo.NegOp(b).result).result
        snh = stablehlo.DivOp(stablehlo.SubtractOp(e1m, e2m).result, two).result
        csh = stablehlo.DivOp(stablehlo.AddOp(stablehlo.AddOp(e1m, e2m).result, two).result, two).result
        if cosine:
            re, im = stablehlo.MulOp(cs, csh).result, stablehlo.MulOp(stablehlo.NegOp(sn).result, snh).result
        else:
            re, im = stablehlo.MulOp(sn, csh).result, stablehlo.MulOp(cs, snh).result
        a_is_zero = stablehlo.CompareOp(a, zero, stablehlo.ComparisonDirectionAttr.get("EQ"),
                                        compare_type=stablehlo.ComparisonTypeAttr.get("FLOAT")).result
        on_axis = stablehlo.ComplexOp(re, zero) if cosine else stablehlo.ComplexOp(zero, im)
        return stablehlo.SelectOp(a_is_zero, on_axis.result, stablehlo.ComplexOp(re, im).result).result
    return rule


register_lowering(elementwise.sin_p)(_trig_rule(stablehlo.SineOp, cosine=False))
register_lowering(elementwise.cos_p)(_trig_rule(stablehlo.CosineOp, cosine=True))


def complex_extremum(x, y, direction: str, dtype) -> ir.Value:
    """The larger (``direction="GT"``) or smaller (``"LT"``) of complex ``x`` and ``y`` by real part, then
    imaginary part: JAX's order (XLA CPU's ``stablehlo.maximum``/``minimum`` order complex numbers otherwise)."""
    float_type = stablehlo.ComparisonTypeAttr.get(compare_type(dtype))

    def cmp(a, b, how):
        return stablehlo.CompareOp(a, b, stablehlo.ComparisonDirectionAttr.get(how), compare_type=float_type).result
    rx, ry = stablehlo.RealOp(x).result, stablehlo.RealOp(y).result
    ix, iy = stablehlo.ImagOp(x).result, stablehlo.ImagOp(y).result
    pick_x = stablehlo.SelectOp(cmp(rx, ry, "EQ"), cmp(ix, iy, direction), cmp(rx, ry, direction)).result
    return stablehlo.SelectOp(pick_x, x, y).result


def _extremum_rule(op, direction: str):
    def rule(ctx, x, y):
        dtype = ctx.avals_in[0].dtype
        return complex_extremum(x, y, direction, dtype) if dtypes.is_complex(dtype) else op(x, y).result
    return rule


register_lowering(elementwise.max_p)(_extremum_rule(stablehlo.MaxOp, "GT"))
register_lowering(elementwise.min_p)(_extremum_rule(stablehlo.MinOp, "LT"))




def compare_type(dtype) -> str:
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtypes.is_unsigned(dtype) or dtypes.is_bool(dtype):
        return "UNSIGNED"
    return "SIGNED"


def _compare_rule(direction: str):
    def rule(ctx, x, y):
        return stablehlo.CompareOp(
            x, y, stablehlo.ComparisonDirectionAttr.get(direction),
            compare_type=stablehlo.ComparisonTypeAttr.get(compare_type(ctx.avals_in[0].dtype))).result
    return rule


@register_lowering(elementwise.pow_p)
def _pow(ctx, x, y):
    # An integer exponent is converted to the base's type first, as JAX lowers it.
    base, exponent = ctx.avals_in
    if exponent.dtype != base.dtype:
        y = stablehlo.ConvertOp(ctx.out_type, y).result  # equal shapes: the result's type
    return stablehlo.PowOp(x, y).result


@register_lowering(elementwise.square_p)
def _square(ctx, x):
    # JAX's: a multiply for integers, chlo.square otherwise (a complex square rounds as (a - b)(a + b) + 2abi).
    if dtypes.is_integer(ctx.avals_in[0].dtype):
        return stablehlo.MulOp(x, x).result
    return _chlo_square(ctx, x)


_chlo_square = _one_to_one("chlo.square")


@register_lowering(elementwise.integer_pow_p)
def _integer_pow(ctx, x, *, y):
    # Square-and-multiply, as JAX does: log2(y) multiplies.
    aval = ctx.avals_in[0]
    exponent = abs(y)
    result = None
    base = x
    while exponent:
        if exponent & 1:
            result = base if result is None else stablehlo.MulOp(result, base).result
        exponent >>= 1
        if exponent:
            base = stablehlo.MulOp(base, base).result
    if result is None:
        result = ctx.broadcast(ctx.constant(1, aval.update(shape=())), ctx.avals_out[0])
    if y < 0:
        one = ctx.broadcast(ctx.constant(1, aval.update(shape=())), ctx.avals_out[0])
        result = stablehlo.DivOp(one, result).result
    return result


@register_lowering(elementwise.select_n_p)
def _select_n(ctx, which, *cases):
    which_aval = ctx.avals_in[0]
    if which_aval.shape != ctx.avals_out[0].shape:
        which = ctx.broadcast(which, which_aval.update(shape=ctx.avals_out[0].shape))
    if which_aval.dtype == dtypes.bool_:
        return stablehlo.SelectOp(which, cases[1], cases[0]).result if len(cases) == 2 else cases[0]
    return _select_tree(ctx, which, list(cases), 0)


def _select_tree(ctx, which, cases, offset):
    # Binary search over the case index: log2(n) selects.
    if len(cases) == 1:
        return cases[0]
    mid = len(cases) // 2
    aval = ctx.avals_in[0]
    pivot = ctx.broadcast(ctx.constant(offset + mid, aval.update(shape=())), aval.update(shape=ctx.avals_out[0].shape))
    pred = stablehlo.CompareOp(which, pivot, stablehlo.ComparisonDirectionAttr.get("LT"),
                               compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result
    low = _select_tree(ctx, which, cases[:mid], offset)
    high = _select_tree(ctx, which, cases[mid:], offset + mid)
    return stablehlo.SelectOp(pred, low, high).result


@register_lowering(elementwise.clamp_p)
def _clamp(ctx, lo, x, hi):
    return stablehlo.ClampOp(lo, x, hi).result


@register_lowering(elementwise.convert_element_type_p)
def _convert(ctx, x, *, new_dtype, weak_type):
    src = ctx.avals_in[0].dtype
    if src == new_dtype:
        return x
    if dtypes.is_complex(src) and not dtypes.is_complex(new_dtype):
        # complex -> real (bool too) drops the imaginary part, as numpy and JAX's convert_element_type do
        # (toolkit.numpy's truth of a complex number, x != 0, is a comparison instead).
        x = stablehlo.RealOp(x).result
        src = dtypes.float32 if src == dtypes.complex64 else dtypes.float64
    if new_dtype == dtypes.bool_ and not dtypes.is_bool(src):
        # x != 0, not a truncating convert.
        zero = ctx.broadcast(ctx.constant(0, ctx.avals_in[0].update(shape=(), dtype=src)),
                             ctx.avals_in[0].update(dtype=src))
        return stablehlo.CompareOp(x, zero, stablehlo.ComparisonDirectionAttr.get("NE"),
                                   compare_type=stablehlo.ComparisonTypeAttr.get(compare_type(src))).result
    return stablehlo.ConvertOp(ctx.out_type, x).result


@register_lowering(elementwise.bitcast_convert_type_p)
def _bitcast(ctx, x, *, new_dtype):
    return stablehlo.BitcastConvertOp(ctx.out_type, x).result


@elementwise.family.derive
def _derive(primitive) -> None:
    """Every op declared with ``hlo=`` lowers to that op; every comparison to ``stablehlo.compare``."""
    traits = primitive.traits
    if traits.get("hlo") and traits.get("accuracy"):
        if primitive is not elementwise.logistic_p:  # its own rule above
            register_lowering(primitive)(_one_to_one_with_accuracy(traits["hlo"]))
    elif traits.get("hlo") and primitive is not elementwise.mul_p:  # mul: its own rule above (out_dtype)
        register_lowering(primitive)(_one_to_one(traits["hlo"]))
    elif traits.get("kind") == "compare":
        register_lowering(primitive)(_compare_rule(traits["direction"]))
