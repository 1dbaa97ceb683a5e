"""jax.lax's convolution helpers: output-shape arithmetic and the wrappers built on ``conv_general_dilated``.

No new primitive: every function here is JAX's own composition (``jax/_src/lax/convolution.py``,
``other.py``, ``windowed_reductions.py``) over toolkit's ``conv_general_dilated``, ``dot_general``,
``broadcast_in_dim``, ``reshape`` and ``transpose``, so what they lower to is what JAX emits for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from toolkit.core.avals import aval_of
from toolkit.lax.convolution import (
    ConvDimensionNumbers, Precision, _canonical_precision, _dilate, conv_dimension_numbers, conv_general_dilated,
    padtype_to_pads,
)
from toolkit.lax.linalg import dot_general
from toolkit.lax.structural import broadcast_in_dim, reshape, rev, transpose

__all__ = [
    "ConvGeneralDilatedDimensionNumbers", "conv_general_dilated_local", "conv_general_dilated_patches",
    "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose",
    "conv_transpose_shape_tuple", "conv_with_general_padding", "reduce_window_shape_tuple",
]

#: What ``dimension_numbers=`` of the convolutions accepts (``jax.lax.ConvGeneralDilatedDimensionNumbers``):
#: ``None``, a :class:`ConvDimensionNumbers`, or three layout strings such as ``("NHWC", "HWIO", "NHWC")``.
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


def _stride_dim(size: int, window: int, stride: int) -> int:
    """How many windows of ``window`` fit in ``size`` at ``stride`` (JAX's ``core.stride_dim``, 0 when none)."""
    if stride < 1:
        raise ValueError(f"window strides must be positive, got {stride}")
    return max(0, (int(size) - int(window)) // int(stride) + 1)


def conv_general_permutations(dimension_numbers: tuple[str, str, str]) -> tuple[tuple[int, ...], ...]:
    """The (lhs, rhs, out) axis permutations to XLA's canonical NC.../OI.../NC... order for layout strings.

    Spatial axes are ordered as they appear in the rhs layout (JAX's rule). A layout lacking
    its two special letters, repeating a letter, or with spatial letters unlike the others is a ``TypeError``.
    """
    if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
            and all(isinstance(s, str) for s in dimension_numbers)):
        raise TypeError(f"conv_general_permutations: expected three layout strings, got {dimension_numbers!r}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}.")
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == set(out_spec) - {"N", "C"}:
        raise TypeError("convolution dimension_numbers elements must each have the same set of spatial "
                        f"characters, got {tuple(dimension_numbers)}.")

    def permutation(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair), key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return (permutation(lhs_spec, charpairs[0]), permutation(rhs_spec, charpairs[1]),
            permutation(out_spec, charpairs[2]))


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], strides: Sequence[int], pads: Any,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The output shape of a convolution of operands already in canonical (NC..., OI...) order.

    ``pads`` is ``'SAME'``/``'VALID'``/``'SAME_LOWER'`` or one ``(low, high)`` pair per spatial
    dimension; a wrong number of pairs is a ``TypeError``, padding that makes a dimension negative a ``ValueError``.
    """
    lhs_shape, rhs_shape = tuple(int(d) for d in lhs_shape), tuple(int(d) for d in rhs_shape)
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, "
                        f"got {len(pads)}.")
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(d < 0 for d in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding dimension: "
                         f"got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    out_space = tuple(_stride_dim(d, k, s) for d, k, s in zip(padded, rhs_shape[2:], strides))
    if batch_group_count > 1:
        if lhs_shape[0] % batch_group_count:
            raise ValueError(f"batch_group_count {batch_group_count} must divide the batch size {lhs_shape[0]}")
        batch = lhs_shape[0] // batch_group_count
    else:
        batch = lhs_shape[0]
    return (batch, rhs_shape[0]) + out_space


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int],
                             padding: Any, dimension_numbers: tuple[str, str, str]) -> tuple[int, ...]:
    """The output shape of ``conv_general_dilated`` (no dilation) for layout strings ``dimension_numbers``."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([int(d) for d in np.take(lhs_shape, lhs_perm)], [int(d) for d in np.take(rhs_shape, rhs_perm)],
                           window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Low and high padding of one spatial dimension of a transposed convolution (JAX's rule)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int],
                               padding: Any, dimension_numbers: tuple[str, str, str]) -> tuple[int, ...]:
    """The output shape of ``conv_transpose`` for layout strings ``dimension_numbers``."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [int(d) for d in np.take(lhs_shape, lhs_perm)]
    rhs_t = [int(d) for d in np.take(rhs_shape, rhs_perm)]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    totals = [int(sum(p)) for p in padding]
    unpadded = [(i - 1) * s - k + 2 for i, k, s in zip(lhs_t[2:], rhs_t[2:], window_strides)]
    out = (lhs_t[0], rhs_t[0]) + tuple(u + p for u, p in zip(unpadded, totals))
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The output shape of ``reduce_window`` with explicit ``(low, high)`` padding and optional dilations."""
    shape = [int(d) for d in operand_shape]
    window = [int(d) for d in window_dimensions]
    if not len(window) == len(window_strides) == len(padding) == len(shape):
        raise TypeError(f"reduce_window_shape_tuple: operand rank {len(shape)}, window {tuple(window)}, strides "
                        f"{tuple(window_strides)} and padding {tuple(padding)} must have one entry per dimension")
    if base_dilation is not None:
        shape = [_dilate(d, int(b)) for d, b in zip(shape, base_dilation)]
    if window_dilation is not None:
        window = [_dilate(d, int(w)) for d, w in zip(window, window_dilation)]
    padded = [d + int(lo) + int(hi) for d, (lo, hi) in zip(shape, padding)]
    return tuple(_stride_dim(d, k, s) for d, k, s in zip(padded, window, window_strides))


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
                              precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` with default (NCHW/OIHW) dimension numbers and the given dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                      5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None, preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The N-d transposed ("fractionally strided") convolution, as ``jax.lax.conv_transpose``.

    Dimension numbers default to TensorFlow's (``NHWC``/``HWIO``). ``'SAME'``/``'VALID'``
    (and, with ``use_consistent_padding``, explicit pairs) name the padding of the forward
    convolution; otherwise explicit pairs pad the transposed one. ``transpose_kernel`` flips
    the kernel's spatial axes and swaps its I/O axes (Keras' ``Conv2DTranspose``).
    """
    lhs_shape, rhs_shape = tuple(aval_of(lhs).shape), tuple(aval_of(rhs).shape)
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise TypeError(f"conv_transpose: lhs and rhs need the same rank >= 2, got shapes {lhs_shape} and "
                        f"{rhs_shape}")
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel_spatial = [rhs_shape[a] for a in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        effective = [_dilate(k, r) for k, r in zip(kernel_spatial, rhs_dilation)]
        per_dim = [padding] * len(strides) if isinstance(padding, str) else [tuple(p) for p in padding]
        pads: Any = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(effective, strides, per_dim))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision, preferred_element_type=preferred_element_type)


def _moveaxis(x: Any, sources: Sequence[int], destinations: Sequence[int]) -> Any:
    ndim = aval_of(x).ndim
    order = [a for a in range(ndim) if a not in sources]
    for dst, src in sorted(zip(destinations, sources)):
        order.insert(dst, src)
    return transpose(x, order)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int], window_strides: Sequence[int],
                                 padding: Any, lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                                 precision: Precision | None = None, preferred_element_type: Any = None) -> Any:
    """The patches ``conv_general_dilated`` would see, flattened into the output's feature dimension.

    As ``jax.lax.conv_general_dilated_patches``: a grouped convolution with an identity kernel, so the
    feature dimension holds ``C * prod(filter_shape)`` values ordered channel-major.
    """
    aval = aval_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(aval.shape, (1, 1) + filter_shape, dimension_numbers)
    spatial_size = math.prod(filter_shape)
    n_channels = aval.shape[dn.lhs_spec[1]]
    rhs = np.eye(spatial_size, dtype=aval.dtype)
    rhs = broadcast_in_dim(rhs, (n_channels, spatial_size, spatial_size), (1, 2))
    rhs = reshape(rhs, (n_channels * spatial_size, 1) + filter_shape)
    rhs = _moveaxis(rhs, (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                precision=None if precision is None else (precision, Precision.DEFAULT),
                                feature_group_count=n_channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                               filter_shape: Sequence[int], lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                               precision: Any = None) -> Any:
    """An unshared ("locally connected") convolution: a separate kernel at each output position.

    As ``jax.lax.conv_general_dilated_local``: ``rhs``'s spatial axes are output positions and its
    ``I`` axis holds ``C * prod(filter_shape)`` input-window values (the patches' order).
    """
    canonical = _canonical_precision(precision)
    if canonical is None:
        lhs_precision = None
    elif isinstance(canonical, tuple):
        lhs_precision = Precision[canonical[0]]
    else:
        lhs_precision = Precision[canonical]
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers, precision=lhs_precision)
    _, rhs_spec, out_spec = conv_dimension_numbers(aval_of(lhs).shape, (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    out = dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)), (tuple(lhs_b), tuple(rhs_b))),
                      precision=precision)
    ndim = aval_of(out).ndim
    return _moveaxis(out, (ndim - 2, ndim - 1), (out_spec[0], out_spec[1]))
