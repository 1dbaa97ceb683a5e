"""General dilated convolution (``jax.lax.conv_general_dilated`` semantics) and ``conv``.

Dimension numbers say which axis of each operand is batch/feature/spatial,
either as a ``ConvDimensionNumbers`` of axis tuples or as layout strings such as
``('NCHW', 'OIHW', 'NCHW')`` / ``('NHWC', 'HWIO', 'NHWC')``.

Example::

    y = toolkit.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Sequence

from toolkit.core import dtypes, sharding_types
from toolkit.core.config import flag_value
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.shape_poly import max_dim
from toolkit.core.families import Family
from toolkit.lax.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from toolkit.lax.shape_rules import check_dtype, dim_param, window_count

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("convolution")

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv", "padtype_to_pads",
           "conv_general_dilated_p"]


class ConvDimensionNumbers(NamedTuple):
    """Axis positions: ``lhs_spec = (batch, feature, *spatial)``, ``rhs_spec = (out feature, in feature,
    *spatial)``, ``out_spec = (batch, feature, *spatial)``."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def _spec_from_string(layout: str, chars: str, what: str) -> tuple[int, ...]:
    """``'NHWC'`` with chars ``'NC'`` -> (pos of N, pos of C, spatial positions in the order of ``layout``)."""
    if len(set(layout)) != len(layout):
        raise ValueError(f"conv dimension_numbers: {what} layout {layout!r} repeats a letter")
    for c in chars:
        if c not in layout:
            raise ValueError(f"conv dimension_numbers: {what} layout {layout!r} lacks the {c!r} dimension")
    return (layout.index(chars[0]), layout.index(chars[1]))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """Canonical ``ConvDimensionNumbers`` from ``None`` (NCHW/OIHW/NCHW), strings or a tuple of specs."""
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        raise TypeError(f"conv: lhs and rhs must have the same rank, got shapes {tuple(lhs_shape)} and "
                        f"{tuple(rhs_shape)}")
    if ndim < 2:
        raise TypeError(f"conv: operands need rank at least 2 (batch and feature), got shape {tuple(lhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(ndim))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(a) for a in s) for s in dimension_numbers))
    if len(dimension_numbers) != 3:
        raise TypeError(f"conv: dimension_numbers must be a triple, got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        for name, layout in (("lhs", lhs), ("rhs", rhs), ("out", out)):
            if len(layout) != ndim:
                raise TypeError(f"conv dimension_numbers: {name} layout {layout!r} has {len(layout)} letters for "
                                f"operands of rank {ndim}")
        lhs_nc = _spec_from_string(lhs, "NC", "lhs")
        rhs_oi = _spec_from_string(rhs, "OI", "rhs")
        out_nc = _spec_from_string(out, "NC", "out")
        # Spatial dimensions pair up by letter; the rhs spatial order defines their order (as in JAX).
        spatial = [c for c in rhs if c not in "OI"]
        for name, layout, special in (("lhs", lhs, "NC"), ("out", out, "NC")):
            if sorted(c for c in layout if c not in special) != sorted(spatial):
                raise ValueError(f"conv dimension_numbers: {name} layout {layout!r} has spatial letters that "
                                 f"differ from the rhs layout {rhs!r}")
        return ConvDimensionNumbers(lhs_nc + tuple(lhs.index(c) for c in spatial),
                                    rhs_oi + tuple(rhs.index(c) for c in spatial),
                                    out_nc + tuple(out.index(c) for c in spatial))
    specs = tuple(tuple(int(a) for a in s) for s in dimension_numbers)
    for name, s in zip(("lhs", "rhs", "out"), specs):
        if sorted(s) != list(range(ndim)):
            raise TypeError(f"conv dimension_numbers: {name} spec {s} is not a permutation of {ndim} axes")
    return ConvDimensionNumbers(*specs)


def _dilate(size: Any, dilation: int) -> Any:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int],
                    padding: str) -> list[tuple[int, int]]:
    """Explicit ``(low, high)`` pairs for ``'VALID'``, ``'SAME'`` (extra on the high side) or ``'SAME_LOWER'``."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"unknown padding {padding!r}: expected 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = max_dim((out - 1) * stride + window - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def _conv_rule(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple, padding: tuple, lhs_dilation: tuple,
               rhs_dilation: tuple, dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
               batch_group_count: int, precision: Any, preferred_element_type: Any) -> ShapedArray:
    name = "conv_general_dilated"
    check_dtype(name, lhs, "biufc", "lhs")  # booleans too, as in JAX (XLA: or of ands)
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"{name}: lhs and rhs must have the same dtype, got {lhs.dtype.name} and {rhs.dtype.name}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nspatial = lhs.ndim - 2
    for what, values in (("window_strides", window_strides), ("padding", padding), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        if len(values) != nspatial:
            raise TypeError(f"{name}: {what} needs one entry per spatial dimension ({nspatial}), got {values}")
    for what, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in values):
            raise ValueError(f"{name}: {what} must be positive, got {values}")
    if feature_group_count < 1 or batch_group_count < 1:
        raise ValueError(f"{name}: feature_group_count and batch_group_count must be positive")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(f"{name}: at most one of feature_group_count and batch_group_count may exceed 1")
    batch = lhs.shape[lhs_spec[0]]
    in_features = lhs.shape[lhs_spec[1]]
    out_features = rhs.shape[rhs_spec[0]]
    kernel_in = rhs.shape[rhs_spec[1]]
    if in_features != kernel_in * feature_group_count:
        raise TypeError(f"{name}: lhs feature dimension {in_features} must equal rhs input feature dimension "
                        f"{kernel_in} times feature_group_count {feature_group_count} (lhs {lhs.shape}, rhs "
                        f"{rhs.shape})")
    if out_features % feature_group_count:
        raise TypeError(f"{name}: rhs output feature dimension {out_features} must be a multiple of "
                        f"feature_group_count {feature_group_count}")
    if batch % batch_group_count or out_features % batch_group_count:
        raise TypeError(f"{name}: lhs batch {batch} and rhs output features {out_features} must be multiples of "
                        f"batch_group_count {batch_group_count}")
    spatial = []
    for k in range(nspatial):
        size = _dilate(lhs.shape[lhs_spec[2 + k]], lhs_dilation[k]) + padding[k][0] + padding[k][1]
        window = _dilate(rhs.shape[rhs_spec[2 + k]], rhs_dilation[k])
        spatial.append(window_count(size, window, window_strides[k]))
    out_shape = [0] * lhs.ndim
    out_shape[out_spec[0]] = batch // batch_group_count
    out_shape[out_spec[1]] = out_features
    for k in range(nspatial):
        out_shape[out_spec[2 + k]] = spatial[k]
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(tuple(out_shape), dtype)


conv_general_dilated_p = family.primitive("conv_general_dilated", shape_rule=_conv_rule)

_PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


class Precision(enum.Enum):
    """``lax.Precision`` (JAX's): how accurately float32 dots and convolutions run on accelerators (none on CPU).

    ``Precision("float32")`` and the other names JAX accepts (``highest``, ``high``, ``bfloat16_3x``,
    ``tensorfloat32``, ``default``, ``bfloat16``, ``fastest``) give a member; kept here because this family and
    ``dot_general`` lower it to StableHLO's ``precision_config``.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> "Precision | None":
        return _PRECISION_STRINGS.get(value)  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH, "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT, None: Precision.DEFAULT,
}


def _canonical_precision(precision: Any) -> Any:
    """``None``, one precision name or a pair of names (for lhs and rhs), from JAX's accepted forms.

    ``None`` takes ``jax_default_matmul_precision`` when it is set (``toolkit.default_matmul_precision``), as JAX.
    """
    if precision is None:
        default = flag_value("jax_default_matmul_precision")
        return None if default is None else _canonical_precision((default, default))
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision  # lowered as an `algorithm` (toolkit/lax/dot_algorithms.py)
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"precision must be one value or a pair, got {precision!r}")
        pair = tuple(_canonical_precision(p) for p in precision)
        if not all(isinstance(p, str) for p in pair):
            raise ValueError(f"a precision pair must name two lax.Precision values, got {precision!r}")
        return pair
    if isinstance(precision, Precision):
        return precision.name
    member = _PRECISION_STRINGS.get(precision.lower()) if isinstance(precision, str) else None
    if member is None and isinstance(precision, str) and precision.upper() in _PRECISIONS:
        member = Precision[precision.upper()]
    if member is None and isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if member is None:
        raise ValueError(f"unknown precision {precision!r}: must be None, a lax.Precision, one of "
                         f"{[k for k in _PRECISION_STRINGS if k]}, a pair of these, a lax.DotAlgorithm, or a "
                         "lax.DotAlgorithmPreset or its name")
    return member.name


@family.function(binds=(conv_general_dilated_p,))
def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None,
                         out_sharding: Any = None) -> Any:
    """A general n-d convolution with strides, padding, dilations and groups (``stablehlo.convolution``).

    ``padding`` is ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or one ``(low, high)``
    pair per spatial dimension. ``lhs_dilation`` > 1 is a transposed
    convolution's input dilation; ``rhs_dilation`` is atrous dilation.
    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the result's
    type on Explicit mesh axes, as JAX's: it replaces the sharding rule's (which refuses a sharded kernel or
    feature dimension); JAX checks it under the name ``dot_general``, and so do the messages here.

    Example::

        out = conv_general_dilated(x_nchw, w_oihw, (1, 1), "VALID")
    """
    lhs_shape, rhs_shape = tuple(aval_of(lhs).shape), tuple(aval_of(rhs).shape)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nspatial = len(lhs_shape) - 2
    window_strides = tuple(int(s) for s in window_strides)
    if lhs_dilation is not None and isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using this op. Please either "
                         "exactly specify the required padding or use conv_transpose.")
    lhs_dilation = (1,) * nspatial if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * nspatial if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    if isinstance(padding, str):
        # As in JAX, string padding looks at the undilated input and the dilated kernel.
        in_spatial = [lhs_shape[a] for a in dnums.lhs_spec[2:]]
        window = [_dilate(rhs_shape[a], d) for a, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
        if len(window_strides) != nspatial:
            raise TypeError(f"conv_general_dilated: window_strides needs {nspatial} entries, got {window_strides}")
        padding = padtype_to_pads(in_spatial, window, window_strides, padding)
    try:
        padding = tuple((dim_param(lo), dim_param(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError("padding argument to conv_general_dilated should be a string or a sequence of (low, high) "
                         f"pairs, got {padding}") from None
    preferred = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    params = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                  rhs_dilation=rhs_dilation, dimension_numbers=dnums, feature_group_count=int(feature_group_count),
                  batch_group_count=int(batch_group_count), precision=_canonical_precision(precision),
                  preferred_element_type=preferred)
    if out_sharding is not None:
        shape = _conv_rule(aval_of(lhs), aval_of(rhs), **params).shape  # the shape errors come first, as JAX's
        return sharding_types.with_out_sharding(_bind_conv, (lhs, rhs), params, out_sharding, "dot_general", shape,
                                                primitive="conv_general_dilated")
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def _bind_conv(lhs: Any, rhs: Any, **params: Any) -> Any:
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` with NCHW input, OIHW kernel and no dilation.

    Example::

        y = toolkit.lax.conv(x, w, (1, 1), "SAME")
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)

