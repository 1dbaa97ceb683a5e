"""``toolkit.scipy.spatial.transform``: ``jax.scipy.spatial.transform``'s ``Rotation`` and ``Slerp``.

Both are named tuples, hence pytrees, as JAX's: a ``Rotation`` holds unit quaternions ``(x, y, z, w)`` (scalar
last) in ``quat`` (shape ``(4,)`` for a single rotation, ``(N, 4)`` for a stack); a ``Slerp`` holds its key times
and the rotation vectors between consecutive key rotations. The conversions are written for one rotation and
vectorized (``toolkit.numpy.vectorize``) over any leading axes, after SciPy's formulas.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit.core.config import numpy_rank_promotion
from toolkit.numpy import linalg as np_linalg

__all__ = ["Rotation", "Slerp"]


def _check_axes(seq: str, intrinsic: bool, extrinsic: bool, num_axes: int) -> None:
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(num_axes - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as unit quaternions ``quat`` (scalar last; one ``(4,)`` or a stack ``(N, 4)``)."""

    quat: Any

    @classmethod
    def concatenate(cls, rotations: typing.Sequence) -> Rotation:
        """The rotations of a sequence of ``Rotation`` objects, stacked into one."""
        return cls(tnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """The rotation(s) composed of elementary rotations about the axes of ``seq`` (``'xyz'`` extrinsic,
        ``'XYZ'`` intrinsic, 1 to 3 axes) by ``angles``."""
        num_axes = len(seq)
        if num_axes < 1 or num_axes > 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
        intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
        extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
        _check_axes(seq, intrinsic, extrinsic, num_axes)
        angles = tnp.atleast_1d(angles)
        axes = tnp.array([_elementary_basis_index(x) for x in seq.lower()])
        return cls(_elementary_quat_compose(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """The rotation(s) of rotation matrices ``matrix`` (``(..., 3, 3)``)."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """The rotation(s) of Modified Rodrigues Parameters ``mrp`` (``(..., 3)``)."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """The rotation(s) of quaternions ``quat`` (``(..., 4)``, scalar last), normalized."""
        return cls(_normalize_quaternion(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """The rotation(s) of rotation vectors ``rotvec`` (``(..., 3)``: axis times angle)."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (a single one: JAX supports only ``num=None``)."""
        if num is not None:
            raise AssertionError("Rotation.identity supports only num=None (as JAX's)")
        return cls(tnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Uniformly distributed rotations: not implemented, as in JAX (``NotImplementedError``)."""
        # JAX's needs scipy.stats.special_ortho_group, which neither JAX nor toolkit has.
        raise NotImplementedError()

    def __getitem__(self, indexer: Any) -> Rotation:  # type: ignore[override]
        """The rotation(s) at ``indexer`` of a stack of rotations."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations of a stack."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Any) -> Rotation:  # type: ignore[override]
        """The composition: ``other`` applied first, then ``self``."""
        return Rotation.from_quat(_compose_quat(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """``vectors`` (``(..., 3)``) rotated by the rotation(s), or by their inverse."""
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """The Euler angles about the 3 axes of ``seq`` (``'xyz'`` extrinsic, ``'XYZ'`` intrinsic), each in
        ``[-pi, pi)``."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
        extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
        _check_axes(seq, intrinsic, extrinsic, 3)
        axes = tnp.array([_elementary_basis_index(x) for x in seq.lower()])
        with numpy_rank_promotion("allow"):
            return _compute_euler_from_quat(self.quat, axes, extrinsic, degrees)

    def as_matrix(self) -> Any:
        """The rotation matrices (``(..., 3, 3)``)."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        """The Modified Rodrigues Parameters (``(..., 3)``), of the rotation angle at most ``pi``."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """The rotation vectors (``(..., 3)``: axis times angle, the angle in ``[0, pi]``)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions (``(..., 4)``), scalar last unless ``scalar_first``; ``canonical``: the sign with
        ``w > 0`` (the first non-zero of ``w, x, y, z`` positive)."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return tnp.roll(quat, shift=1, axis=-1)
        return quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(_inv(self.quat))

    def magnitude(self) -> Any:
        """The rotation angle(s), in ``[0, pi]``."""
        return _magnitude(self.quat)

    def mean(self, weights: Any | None = None) -> Rotation:
        """The (weighted) mean rotation of a stack: the quaternion maximizing ``sum w_i (q . q_i)**2`` (the top
        eigenvector of ``sum w_i q_i q_i^T``)."""
        if weights is None:
            w = tnp.ones(self.quat.shape[0], dtype=self.quat.dtype)
        else:
            w = tnp.asarray(weights, dtype=self.quat.dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of rotations, got "
                             f"{w.shape[0]} values and {len(self)} rotations.")
        k = tnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, v = np_linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``) rather than a stack."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations between key times (made by :meth:`Slerp.init`)."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator of the key ``rotations`` (at least 2) at increasing key ``times`` (1-d); times that do
        not increase are not checked (a value-dependent check cannot run under ``jit``), as in JAX."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = tnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {times.shape[0]} timestamps.")
        timedelta = tnp.diff(times)
        starts = Rotation(rotations.as_quat()[:-1])
        return cls(times=times, timedelta=timedelta, rotations=starts,
                   rotvecs=(starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar: a single rotation; 1-d: a stack)."""
        compute_times = tnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = compute_times.ndim == 0
        compute_times = tnp.atleast_1d(compute_times)
        ind = tnp.maximum(tnp.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        if single_time:
            return result[0]
        return result


def _vectorized(signature: str) -> Any:
    return functools.partial(tnp.vectorize, signature=signature)


@_vectorized("(m,m),(m),()->(m)")
def _apply(matrix: Any, vector: Any, inverse: Any) -> Any:
    return tnp.where(inverse, matrix.T, matrix) @ vector


@_vectorized("(m)->(n,n)")
def _as_matrix(quat: Any) -> Any:
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return tnp.array([[+ x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), - x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), - x2 - y2 + z2 + w2]])


@_vectorized("(m)->(n)")
def _as_mrp(quat: Any) -> Any:
    sign = tnp.where(quat[3] < 0, -1.0, 1.0)
    denominator = 1.0 + sign * quat[3]
    return sign * quat[:3] / denominator


@_vectorized("(m),()->(n)")
def _as_rotvec(quat: Any, degrees: Any) -> Any:
    quat = tnp.where(quat[3] < 0, -quat, quat)  # w >= 0, so that 0 <= angle <= pi
    angle = 2.0 * tnp.arctan2(_vector_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    # angle / sin(angle / 2) by its Taylor series near 0, where the quotient loses precision.
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / tnp.sin(angle / 2)
    scale = tnp.where(angle <= 1e-3, small_scale, large_scale)
    scale = tnp.where(degrees, tnp.rad2deg(scale), scale)
    return scale * tnp.array(quat[:3])


@_vectorized("(n),(n)->(n)")
def _compose_quat(p: Any, q: Any) -> Any:
    cross = tnp.cross(p[:3], q[:3])
    return tnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@_vectorized("(m),(l),(),()->(n)")
def _compute_euler_from_quat(quat: Any, axes: Any, extrinsic: Any, degrees: Any) -> Any:
    # Bernardes & Viollet's quaternion-to-Euler method, as SciPy's, with the axis choices as traced values.
    angle_first = tnp.where(extrinsic, 0, 2)
    angle_third = tnp.where(extrinsic, 2, 0)
    axes = tnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = tnp.where(symmetric, 3 - i - j, k)
    sign = tnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = tnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = tnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = tnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = tnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = tnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * tnp.arctan2(tnp.hypot(c, d), tnp.hypot(a, b)))
    # case 1: the middle angle is 0, case 2: it is pi (gimbal lock: only the sum or difference is determined).
    case = tnp.where(tnp.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = tnp.where(tnp.abs(angles[1]) <= eps, 1, case)
    half_sum = tnp.arctan2(b, a)
    half_diff = tnp.arctan2(d, c)
    angles = angles.at[0].set(tnp.where(case == 1, 2 * half_sum, 2 * half_diff * tnp.where(extrinsic, -1, 1)))
    angles = angles.at[angle_first].set(tnp.where(case == 0, half_sum - half_diff, angles[angle_first]))
    angles = angles.at[angle_third].set(tnp.where(case == 0, half_sum + half_diff, angles[angle_third]))
    angles = angles.at[angle_third].set(tnp.where(symmetric, angles[angle_third], angles[angle_third] * sign))
    angles = angles.at[1].set(tnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return tnp.where(degrees, tnp.rad2deg(angles), angles)


def _elementary_basis_index(axis: str) -> int:
    if axis == "x":
        return 0
    if axis == "y":
        return 1
    if axis == "z":
        return 2
    raise ValueError(f"Expected axis to be from ['x', 'y', 'z'], got {axis}")


@_vectorized("(m),(m),(),()->(n)")
def _elementary_quat_compose(angles: Any, axes: Any, intrinsic: Any, degrees: Any) -> Any:
    angles = tnp.where(degrees, tnp.deg2rad(angles), angles)
    result = _make_elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        quat = _make_elementary_quat(axes[idx], angles[idx])
        result = tnp.where(intrinsic, _compose_quat(result, quat), _compose_quat(quat, result))
    return result


@_vectorized("(m),()->(n)")
def _from_rotvec(rotvec: Any, degrees: Any) -> Any:
    rotvec = tnp.where(degrees, tnp.deg2rad(rotvec), rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    # sin(angle / 2) / angle by its Taylor series near 0.
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = tnp.sin(angle / 2) / angle
    scale = tnp.where(angle <= 1e-3, small_scale, large_scale)
    return tnp.hstack([scale * rotvec, tnp.cos(angle / 2)])


@_vectorized("(m,m)->(n)")
def _from_matrix(matrix: Any) -> Any:
    # From the largest of the diagonal and the trace, for accuracy (Markley's method, as SciPy).
    matrix_trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = tnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], matrix_trace], dtype=matrix.dtype)
    choice = tnp.argmax(decision)
    i = choice
    j = (i + 1) % 3
    k = (j + 1) % 3
    quat_012 = tnp.empty(4, dtype=matrix.dtype)
    quat_012 = quat_012.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    quat_012 = quat_012.at[j].set(matrix[j, i] + matrix[i, j])
    quat_012 = quat_012.at[k].set(matrix[k, i] + matrix[i, k])
    quat_012 = quat_012.at[3].set(matrix[k, j] - matrix[j, k])
    quat_3 = tnp.empty(4, dtype=matrix.dtype)
    quat_3 = quat_3.at[0].set(matrix[2, 1] - matrix[1, 2])
    quat_3 = quat_3.at[1].set(matrix[0, 2] - matrix[2, 0])
    quat_3 = quat_3.at[2].set(matrix[1, 0] - matrix[0, 1])
    quat_3 = quat_3.at[3].set(1 + decision[3])
    quat = tnp.where(choice != 3, quat_012, quat_3)
    return _normalize_quaternion(quat)


@_vectorized("(m)->(n)")
def _from_mrp(mrp: Any) -> Any:
    mrp_squared_plus_1 = tnp.dot(mrp, mrp) + 1
    return tnp.hstack([2 * mrp[:3], (2 - mrp_squared_plus_1)]) / mrp_squared_plus_1


@_vectorized("(n)->(n)")
def _inv(quat: Any) -> Any:
    return quat * tnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@_vectorized("(n)->()")
def _magnitude(quat: Any) -> Any:
    return 2.0 * tnp.arctan2(_vector_norm(quat[:3]), tnp.abs(quat[3]))


@_vectorized("(),()->(n)")
def _make_elementary_quat(axis: Any, angle: Any) -> Any:
    quat = tnp.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(tnp.cos(angle / 2.0))
    return quat.at[axis].set(tnp.sin(angle / 2.0))


@_vectorized("(n)->(n)")
def _normalize_quaternion(quat: Any) -> Any:
    return quat / _vector_norm(quat)


@_vectorized("(n)->()")
def _vector_norm(vector: Any) -> Any:
    return tnp.sqrt(tnp.dot(vector, vector))


@_vectorized("(n)->(n)")
def _make_canonical(quat: Any) -> Any:
    is_neg = quat < 0
    is_zero = quat == 0
    neg = (is_neg[3]
           | (is_zero[3] & is_neg[0])
           | (is_zero[3] & is_zero[0] & is_neg[1])
           | (is_zero[3] & is_zero[0] & is_zero[1] & is_neg[2]))
    return tnp.where(neg, -quat, quat)
