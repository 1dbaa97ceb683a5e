"""``toolkit.nn.initializers``: ``jax.nn.initializers`` — functions ``init(key, shape, dtype) -> array``.

Each factory (``normal(0.02)``, ``glorot_uniform()``, ...) returns an
initializer; drawn with the same key they give JAX's values bit for bit,
since ``toolkit.random`` is JAX's threefry. ``out_sharding`` places the
result (a ``NamedSharding`` or a ``PartitionSpec`` under ``set_mesh``).

``orthogonal`` and ``delta_orthogonal`` take the QR decomposition of a normal
draw on LAPACK's ``geqrf``/``orgqr``, the kernels JAX calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from toolkit import numpy as tnp
from toolkit import random
from toolkit.core import dtypes
from toolkit.resharding import reshard

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
           "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
           "zeros"]

Axes = int | Sequence[int]


@runtime_checkable
class Initializer(Protocol):
    """What every initializer is: ``init(key, shape, dtype=None, out_sharding=None) -> array``."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any: ...


def _float_dtype(dtype: Any) -> np.dtype:
    # JAX's default float dtype (float32 with x64 off).
    return np.dtype(np.float32) if dtype is None else dtypes.canonicalize_dtype(dtype)


def _placed(value: Any, out_sharding: Any) -> Any:
    return value if out_sharding is None else reshard(value, out_sharding)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (``key`` is ignored)."""
    return tnp.zeros(shape, _float_dtype(dtype), out_sharding=out_sharding)


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (``key`` is ignored)."""
    return tnp.ones(shape, _float_dtype(dtype), out_sharding=out_sharding)


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling with ``value``."""
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        return tnp.full(shape, value, _float_dtype(dtype), out_sharding=out_sharding)
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Values uniform in ``[0, scale)``."""
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        dtype = _float_dtype(dtype)
        return _placed(random.uniform(key, shape, dtype) * tnp.asarray(scale, dtype), out_sharding)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Values normal with mean 0 and standard deviation ``stddev``."""
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        dtype = _float_dtype(dtype)
        return _placed(random.normal(key, shape, dtype) * tnp.asarray(stddev, dtype), out_sharding)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0) -> Initializer:
    """A normal truncated to ``(lower, upper)``, then times ``stddev`` (no variance correction, as JAX)."""
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        dtype = _float_dtype(dtype)
        return _placed(random.truncated_normal(key, lower, upper, shape, dtype) * tnp.asarray(stddev, dtype),
                       out_sharding)
    return init


def _size(shape: Sequence[int], axes: Axes) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _fans(shape: Sequence[int], in_axis: Axes, out_axis: Axes, batch_axis: Axes) -> tuple[float, float]:
    """Effective fan-in and fan-out: axes in none of the three form the receptive field (a kernel's window)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
                         "default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


def _complex_uniform(key: Any, shape: Sequence[int], dtype: np.dtype) -> Any:
    # Uniform on a disk of unit variance: radius sqrt(2u), angle uniform.
    key_r, key_theta = random.split(key)
    real = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
    r = tnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * tnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: float, shape: Sequence[int], dtype: np.dtype) -> Any:
    # A complex normal of unit variance, modulus truncated to `upper` (inverse CDF of the modulus).
    key_r, key_theta = random.split(key)
    real = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
    t = (1 - tnp.exp(tnp.asarray(-(upper ** 2), dtype))) * random.uniform(key_r, shape, real).astype(dtype)
    r = tnp.sqrt(-tnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * tnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: Any, mode: Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"],
                     distribution: Literal["truncated_normal", "normal", "uniform"], in_axis: Axes = -2,
                     out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """Variance ``scale / n`` with ``n`` the fan given by ``mode``, from ``distribution`` (``jax.nn.initializers``).

    ``truncated_normal`` cuts at two standard deviations and rescales so the
    variance after truncation is the one asked for; ``uniform`` draws from an
    interval (a disk for complex dtypes). A bad ``mode`` or ``distribution`` is
    a ``ValueError`` when the initializer is called, as in JAX.
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        shape = tuple(int(d) for d in shape)
        dtype = _float_dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = tnp.asarray(scale / denominator, dtype)
        complex_ = dtypes.is_complex(dtype)
        if distribution == "truncated_normal":
            if not complex_:
                # .8796... is the standard deviation of a standard normal truncated to (-2, 2)
                stddev = tnp.sqrt(variance) / tnp.asarray(.87962566103423978, dtype)
                value = random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            else:
                stddev = tnp.sqrt(variance) / tnp.asarray(.95311164380491208, dtype)
                value = _complex_truncated_normal(key, 2, shape, dtype) * stddev
        elif distribution == "normal":
            value = random.normal(key, shape, dtype) * tnp.sqrt(variance)
        elif distribution == "uniform":
            if not complex_:
                value = random.uniform(key, shape, dtype, -1) * tnp.sqrt(3 * variance)
            else:
                value = _complex_uniform(key, shape, dtype) * tnp.sqrt(variance)
        else:
            raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
        return _placed(value, out_sharding)
    return init


def glorot_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_avg", "uniform")`` (Glorot & Bengio 2010)."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_avg", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(1.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(2.0, "fan_in", "uniform")`` (He et al. 2015)."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
    """``variance_scaling(2.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _orthogonal_matrices(key: Any, n: int, m: int, dtype: np.dtype) -> Any:
    """An ``n x m`` matrix with orthonormal rows or columns: ``jax.random.orthogonal(key, n, (), dtype, m)``.

    The Q of a normal ``max(n, m) x min(n, m)`` draw, its columns signed by R's diagonal
    (Mezzadri 2007), transposed when ``n < m`` — JAX's algorithm, so the same key gives its bits.
    """
    z = random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = tnp.linalg.qr(z)
    x = q * tnp.expand_dims(tnp.sign(tnp.linalg.diagonal(r)), -2)
    return tnp.matrix_transpose(x) if n < m else x


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """A matrix with orthonormal rows or columns (whichever are fewer) times ``scale``.

    Shapes of more than two dimensions are flattened to ``(prod(other dims), shape[column_axis])``
    first; a shape of fewer than two dimensions is a ``ValueError``. ``out_sharding`` is not
    supported (``NotImplementedError``, as JAX).
    """
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            raise NotImplementedError("orthogonal initializer: out_sharding is not supported (as in JAX)")
        dtype = _float_dtype(dtype)
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return tnp.zeros(shape, dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        Q = _orthogonal_matrices(key, n_rows, n_cols, dtype)
        Q = tnp.reshape(Q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        Q = tnp.moveaxis(Q, -1, column_axis)
        return tnp.array(scale, dtype) * Q
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """The delta-orthogonal convolution kernel (Xiao et al. 2018): zeros except an orthogonal
    ``shape[-2:]`` matrix at the spatial centre of a 3D, 4D or 5D ``shape`` (``fan_in <= fan_out``)."""
    default = dtype

    def init(key: Any, shape: Sequence[int], dtype: Any = default, out_sharding: Any = None) -> Any:
        if out_sharding is not None:
            raise NotImplementedError("delta_orthogonal initializer: out_sharding is not supported (as in JAX)")
        dtype = _float_dtype(dtype)
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho_matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return tnp.zeros(shape, dtype).at[centre + (Ellipsis,)].set(ortho_matrix)
    return init
