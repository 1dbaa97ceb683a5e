"""Image resampling as ``jax.image`` (JAX 0.10.2): separable kernels applied as weight-matrix contractions.

For every resized dimension of length ``m`` → ``n`` the output is ``x``
contracted with an ``m × n`` weight matrix ``W``, where ``W[j, i]`` is the
kernel evaluated at the distance between input pixel ``j`` and the point
``(i + 0.5) / scale - translation / scale - 0.5`` the output pixel ``i`` samples,
with the kernel stretched by ``1 / scale`` when downsampling with ``antialias``
(a low-pass filter), each column normalized to sum 1, and columns whose sample
point lies outside the input zeroed. Kernels: triangle (``linear``), Keys cubic
with ``a = -0.5`` (``cubic``), OpenCV's ``a = -0.75`` cubic with edge padding
(``cubic-pytorch`` without antialias), Lanczos 3 and 5, and ``area`` (the
overlap length of the pixel intervals). ``nearest`` gathers pixel
``floor((i + 0.5) * m / n)`` (in float32, as JAX).

Bit-compatibility with JAX comes from doing the same arithmetic in the same
order and dtypes: in ``resize`` the scale ``n / m`` and its inverse are Python
(double) numbers that enter float32 arithmetic as weak scalars, as in JAX;
``scale_and_translate`` takes them as arrays. Symbolic (polymorphic) sizes are
not supported.
"""

from __future__ import annotations

import enum
import math
import string
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.avals import canonicalize_shape
from toolkit.lax.convolution import Precision
from toolkit.stages import jit

__all__ = ["ResizeMethod", "resize", "scale_and_translate", "compute_weight_mat"]


class ResizeMethod(enum.Enum):
    """Resampling kernels (``jax.image.ResizeMethod``); ``from_string`` accepts JAX's names."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method named ``s`` (``"nearest"``, ``"linear"``/``"bilinear"``/``"trilinear"``/``"triangle"``,
        ``"lanczos3"``, ``"lanczos5"``, ``"cubic"``/``"bicubic"``/``"tricubic"``, ``"cubic-pytorch"``/
        ``"bicubic-pytorch"``, ``"area"``); ``ValueError`` for any other name."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
          "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
          "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
          "tricubic": ResizeMethod.CUBIC, "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
          "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}


def _method(method: Any) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if isinstance(method, ResizeMethod):
        return method
    raise TypeError(f"method must be a string or a toolkit.image.ResizeMethod, got {method!r}")


# --- kernels: weight as a function of the (scaled) distance |x| ----------------------------------

def _triangle(x: Any) -> Any:
    return tnp.maximum(0, 1 - tnp.abs(x))


def _keys_cubic(x: Any) -> Any:
    # Keys (1981) cubic convolution with A = -0.5: Pillow's, TensorFlow's, PyTorch's with antialiasing.
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = tnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return tnp.where(x >= 2., 0., out)


def _opencv_cubic(x: Any) -> Any:
    # A = -0.75: OpenCV's, and PyTorch's without antialiasing.
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = tnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return tnp.where(x >= 2.0, 0.0, out)


def _lanczos(radius: float, x: Any) -> Any:
    y = radius * tnp.sin(np.pi * x) * tnp.sin(np.pi * x / radius)
    # y / (pi**2 x**2), or 1 near x = 0 where that is 0/0
    out = tnp.where(x > 1e-3, tnp.divide(y, tnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return tnp.where(x > radius, 0., out)


_AREA = None  # the area "kernel" is the overlap of intervals, not a function of distance

_KERNELS: dict[ResizeMethod, tuple[int, Callable[[Any], Any] | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, partial(_lanczos, 3.)),
    ResizeMethod.LANCZOS5: (5, partial(_lanczos, 5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights: Any) -> Any:
    """Columns divided by their sums; columns summing to (almost) 0 become 0."""
    total = tnp.sum(weights, axis=0, keepdims=True)
    return tnp.where(tnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                     tnp.divide(weights, tnp.where(total != 0, total, 1)), 0)


def compute_weight_mat(input_size: int, output_size: int, scale: Any, translation: Any,
                       kernel: Callable[[Any], Any] | None, antialias: bool, edge_padding: bool = False,
                       radius: int | None = None) -> Any:
    """The ``input_size × output_size`` resampling matrix of one dimension (``kernel=None``: area).

    ``scale``/``translation`` are Python numbers or float scalars; see the module docstring for the math.
    """
    dtype = dtypes.result_type(scale, translation)
    inv_scale = 1. / scale
    # Downsampling with antialias widens the kernel (a low-pass filter); upsampling only interpolates.
    kernel_scale = tnp.maximum(inv_scale, 1.) if antialias else 1.
    out_pos = tnp.arange(output_size, dtype=dtype)
    sample_f = (out_pos + 0.5) * inv_scale - translation * inv_scale - 0.5
    if edge_padding:
        if radius is None:
            raise ValueError("edge padding needs the kernel's radius")
        if antialias:
            k = math.ceil(radius * max(1.0 / float(np.asarray(scale)), 1.0))
        else:
            k = radius
    else:
        k = 0
    expanded = tnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is None:
        left_out = out_pos * inv_scale - translation * inv_scale
        right_out = left_out + inv_scale
        left_in = tnp.arange(input_size, dtype=dtype)
        right_in = left_in + 1.0
        weights = tnp.maximum(0.0, tnp.minimum(right_out[None, :], right_in[:, None])
                              - tnp.maximum(left_out[None, :], left_in[:, None]))
    else:
        distance = tnp.abs(sample_f[None, :] - expanded[:, None])
        weights = kernel(distance / kernel_scale)
    if edge_padding:
        # Weights of the k pixels beyond each edge move onto the edge pixel (a scatter-add).
        clamped = tnp.clip(expanded.astype(tnp.int32), 0, input_size - 1)
        cols = lax.broadcast_in_dim(tnp.arange(output_size), (expanded.shape[0], output_size), (1,))
        mat = tnp.zeros((input_size, output_size), dtype=dtype)
        return _normalized(mat.at[clamped[:, None], cols].add(weights))
    weights = _normalized(weights)
    # Sample points outside the input (sample_f already has the 0.5 subtracted) get no weight.
    inside = tnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return tnp.where(inside[None, :], weights, 0)


def _optimal_path(inputs: list[frozenset], output: frozenset, sizes: dict[str, int]) -> list[tuple[int, int]]:
    """The pairwise contraction order ``jnp.einsum`` gets from opt_einsum's ``optimal`` search (its
    ``"auto"`` choice for up to 4 operands): the fewest flops, first found in its search order wins;
    as positions in the shrinking operand list (contracted pairs leave, their result goes last)."""
    best: dict[str, Any] = {"flops": math.inf, "path": ()}

    def cost(i: int, j: int, inputs: tuple, remaining: frozenset) -> tuple[frozenset, int]:
        either = inputs[i] | inputs[j]
        keep = frozenset(output).union(*(inputs[k] for k in remaining - {i, j}))
        k12 = either & keep
        inner = bool((inputs[i] & inputs[j]) - keep)
        return k12, math.prod(sizes[c] for c in either) * (2 if inner else 1)

    def search(path: tuple, remaining: frozenset, inputs: tuple, flops: int) -> None:
        if len(remaining) == 1:
            best["flops"], best["path"] = flops, path
            return
        for a in sorted(remaining):
            for b in sorted(remaining):
                if b <= a:
                    continue
                k12, f = cost(a, b, inputs, remaining)
                if flops + f >= best["flops"]:
                    continue
                search(path + ((a, b),), (remaining - {a, b}) | {len(inputs)}, inputs + (k12,), flops + f)

    search((), frozenset(range(len(inputs))), tuple(inputs), 0)
    ids = list(range(2 * len(inputs)))  # static single assignment ids -> positions
    linear = []
    for pair in best["path"]:
        linear.append(tuple(ids[k] for k in pair))
        for k in pair:
            ids[k:] = [v - 1 for v in ids[k:]]
    return linear  # type: ignore[return-value]


def _dot(lhs: Any, lhs_names: str, rhs: Any, rhs_names: str, result_names: str, precision: Any) -> Any:
    """One pairwise contraction as ``jnp.einsum`` emits it: ``dot_general(rhs, lhs)`` when that gives the
    result's label order, else ``dot_general(lhs, rhs)`` and a transpose."""
    contracted = sorted((set(lhs_names) & set(rhs_names)) - set(result_names))
    batch = [c for c in result_names if c in lhs_names and c in rhs_names]
    lhs_c, rhs_c = tuple(lhs_names.index(c) for c in contracted), tuple(rhs_names.index(c) for c in contracted)
    lhs_b, rhs_b = tuple(lhs_names.index(c) for c in batch), tuple(rhs_names.index(c) for c in batch)
    gone = set(batch) | set(contracted)
    rest_lhs = "".join(c for c in lhs_names if c not in gone)
    rest_rhs = "".join(c for c in rhs_names if c not in gone)
    names = "".join(batch) + rest_rhs + rest_lhs
    if names == result_names:
        return lax.dot_general(rhs, lhs, ((rhs_c, lhs_c), (rhs_b, lhs_b)), precision=precision)
    names = "".join(batch) + rest_lhs + rest_rhs
    out = lax.dot_general(lhs, rhs, ((lhs_c, rhs_c), (lhs_b, rhs_b)), precision=precision)
    if names != result_names:
        out = lax.transpose(out, tuple(names.index(c) for c in result_names))
    return out


def _contract(x: Any, out_shape: tuple, spatial_dims: Sequence[int], scale: Sequence[Any],
              translation: Sequence[Any], kernel: Callable[[Any], Any] | None, antialias: bool, precision: Any,
              edge_padding: bool, radius: int | None) -> Any:
    if not spatial_dims:
        return x
    letters = string.ascii_letters
    nd = x.ndim
    in_labels = letters[:nd]
    out_labels = list(in_labels)
    labels, operands = [in_labels], [x]
    for i, d in enumerate(spatial_dims):
        d = _axis(d, nd)
        w = compute_weight_mat(x.shape[d], out_shape[d], scale[i], translation[i], kernel, antialias,
                               edge_padding=edge_padding, radius=radius).astype(x.dtype)
        new = letters[nd + i]
        labels.append(in_labels[d] + new)
        operands.append(w)
        out_labels[d] = new
    output = "".join(out_labels)
    sizes = {c: n for lab, op in zip(labels, operands) for c, n in zip(lab, op.shape)}
    # The contractions jnp.einsum performs for this expression: opt_einsum's path, each pair popped from
    # the right, intermediates labelled in "tensordot order", the last one in the output's order.
    path = _optimal_path([frozenset(lab) for lab in labels], frozenset(output), sizes)
    for step, pair in enumerate(path):
        picked = sorted(pair, reverse=True)
        names = [labels.pop(k) for k in picked]
        ops = [operands.pop(k) for k in picked]
        keep = set(output).union(*labels)
        either = "".join(names)
        result = output if step == len(path) - 1 else "".join(
            sorted({c for c in either if c in keep}, key=either.find))
        operands.append(_dot(ops[0], names[0], ops[1], names[1], result, precision))
        labels.append(result)
    return operands[0]


def _axis(d: int, ndim: int) -> int:
    if not -ndim <= d < ndim:
        raise ValueError(f"spatial dimension {d} is out of range for an image of {ndim} dimensions")
    return d % ndim


def _check_rank(shape: tuple, image: Any) -> None:
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {tuple(image.shape)}")


def _inexact(x: Any) -> Any:
    x = tnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float_dtype())


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int], scale: Any,
                        translation: Any, method: str | ResizeMethod, antialias: bool = True,
                        precision: Any = Precision.HIGHEST) -> Any:
    """Resample ``image`` to ``shape`` in ``spatial_dims``: output pixel ``i`` samples input position
    ``(i + 0.5 - translation) / scale - 0.5`` (``jax.image.scale_and_translate``).

    ``scale``/``translation`` have one entry per spatial dimension; ``method`` is a
    :class:`ResizeMethod` or its name, except ``nearest`` (``ValueError``, as in JAX).
    """
    shape = canonicalize_shape(shape)
    image = _inexact(image)
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    scale, translation = tnp.asarray(scale), tnp.asarray(translation)
    dt = dtypes.result_type(scale, translation)
    dt = dt if dtypes.is_inexact(dt) else dtypes.default_float_dtype()
    scale, translation = scale.astype(dt), translation.astype(dt)
    spatial_dims = tuple(spatial_dims)
    if len(scale) != len(spatial_dims) or len(translation) != len(spatial_dims):
        raise ValueError(f"scale and translation need one entry per spatial dimension ({len(spatial_dims)}), "
                         f"got {len(scale)} and {len(translation)}")
    return _contract(image, shape, spatial_dims, scale, translation, kernel, antialias, precision,
                     edge_padding, radius)


def _resize_nearest(x: Any, out_shape: tuple) -> Any:
    for d in range(x.ndim):
        m, n = x.shape[d], out_shape[d]
        if m == n:
            continue
        offsets = (tnp.arange(n, dtype=np.float32) + 0.5) * m / n
        offsets = tnp.floor(offsets.astype(np.float32)).astype(np.int32)
        x = tnp.take(x, offsets, axis=d)
    return x


@partial(jit, static_argnums=(1, 2, 3, 4))
def _resize(image: Any, shape: tuple, method: ResizeMethod, antialias: bool, precision: Any) -> Any:
    _check_rank(shape, image)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    # Dimensions of unchanged size are skipped: every kernel interpolates (identity warp = identity).
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    return _contract(image, shape, spatial_dims, scale, [0.] * len(spatial_dims), kernel, antialias, precision,
                     edge_padding, radius)


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = Precision.HIGHEST) -> Any:
    """``image`` resampled to ``shape`` (``jax.image.resize``), same rank; every differing dimension is resized.

    ``method``: a :class:`ResizeMethod` or its name (``"nearest"``, ``"linear"``, ``"cubic"``,
    ``"lanczos3"``, ``"lanczos5"``, ``"cubic-pytorch"``, ``"area"``). With ``antialias`` (default),
    downsampling low-pass filters (not for ``nearest``). Integer images are resampled as floats.
    """
    if not hasattr(image, "shape"):
        image = tnp.asarray(image)
    return _resize(image, canonicalize_shape(shape), _method(method), bool(antialias), precision)
