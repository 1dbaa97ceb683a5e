"""``toolkit.scipy.ndimage.map_coordinates``, ``toolkit.scipy.interpolate.RegularGridInterpolator`` and
``toolkit.scipy.spatial.transform`` (``Rotation``, ``Slerp``) against ``jax.scipy`` in the same run: values, dtypes
and weak types at inside, boundary and outside points and nan, every mode and order, Python-scalar and integer
arguments, eagerly and under ``jit``, gradients, pytree structure, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.scipy.interpolate import RegularGridInterpolator
from toolkit.scipy.ndimage import map_coordinates
from toolkit.scipy.spatial.transform import Rotation, Slerp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jndimage = pytest.importorskip("jax.scipy.ndimage")
jinterpolate = pytest.importorskip("jax.scipy.interpolate")
jtransform = pytest.importorskip("jax.scipy.spatial.transform")

F = np.float32
RNG = np.random.default_rng(0)
IMAGE = RNG.normal(size=(3, 4)).astype(F)
INTS = np.arange(5, dtype=np.int32) * 3 - 4
# Coordinates inside, on the edges, at half-points (rounding), outside on both sides, far outside and nan.
COORD_ROWS = np.array([0.0, 0.5, 1.25, 2.0, 2.5, -0.5, -1.7, 3.6, 7.2, np.nan], F)
COORD_COLS = np.array([0.0, 1.5, 3.0, 3.5, -0.5, 2.7, -4.2, 5.5, 1.0, 2.0], F)


def _weak(x):
    return x.aval.weak_type if hasattr(x, "aval") else None


def _close(ours, theirs, rtol=2e-6, atol=1e-6, exact=False):
    assert _weak(ours) == _weak(theirs), (_weak(ours), _weak(theirs))
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape,
                                                                       theirs.shape)
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def _same_error(ours, theirs, fragment):
    with pytest.raises(Exception) as theirs_info:
        theirs()
    with pytest.raises(type(theirs_info.value), match=fragment or None):
        ours()
    assert fragment.replace("\\", "") in str(theirs_info.value)


# --- map_coordinates -------------------------------------------------------------------------------------------


def _mapped(m, image, ints, rows, cols):
    out = []
    for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
        for order in (0, 1):
            for im, coords in ((image, [rows, cols]), (ints, [cols]),
                               (image, [np.array([2, -1, 0, 5], np.int32), np.array([1, 3, 4, -2], np.int32)])):
                for cval in ((0.0, 1.5, -2) if mode == "constant" else (0.0,)):  # cval is read only by 'constant'
                    out.append(m(im, coords, order, mode=mode, cval=cval))
        # A 1-sample axis (mirror's wave has period 0 there), Python scalars.
        out.append(m(np.array([[2.5]], F), [0.3, np.array([0.2, -1.0], F)], 1, mode))
    out.append(m(image, [1.5, 2.25], 1))
    return out


def test_map_coordinates_every_mode_and_order():
    args = IMAGE, INTS, COORD_ROWS, COORD_COLS
    _all_pairs(toolkit.jit(lambda *a: _mapped(map_coordinates, *a))(*args),
               jax.jit(lambda *a: _mapped(jndimage.map_coordinates, *a))(*args))
    for image, coords, order, mode in ((IMAGE, [COORD_ROWS, COORD_COLS], 1, "mirror"), (INTS, [COORD_COLS], 0, "wrap")):
        _close(map_coordinates(image, coords, order, mode, -1.0),
               jndimage.map_coordinates(image, coords, order, mode, -1.0), exact=True)


def test_map_coordinates_jit_grad_and_weak_types():
    def loss(m):
        return lambda image, rows: m(image, [rows, COORD_COLS[:9]], 1, mode="reflect").sum()

    rows = COORD_ROWS[:9]
    _close(toolkit.grad(loss(map_coordinates), argnums=(0, 1))(IMAGE, rows)[0],
           jax.grad(loss(jndimage.map_coordinates), argnums=(0, 1))(IMAGE, rows)[0])
    _close(toolkit.grad(loss(map_coordinates), argnums=1)(IMAGE, rows),
           jax.grad(loss(jndimage.map_coordinates), argnums=1)(IMAGE, rows))
    for order in (0, 1):
        def scalar(m, order=order):
            return lambda image, c: m(image, [c, 1.0], order, "constant", 0.5)
        # A weakly typed traced coordinate; a weakly typed input (a Python float under jit is 0-d: 1-d below).
        _close(toolkit.jit(scalar(map_coordinates))(IMAGE, 0.7), jax.jit(scalar(jndimage.map_coordinates))(IMAGE, 0.7))
        weak_image = (lambda m, order=order: lambda x: m(tnp.zeros(4) + x if m is map_coordinates
                                                          else jnp.zeros(4) + x, [COORD_COLS], order))
        _close(toolkit.jit(weak_image(map_coordinates))(1.5), jax.jit(weak_image(jndimage.map_coordinates))(1.5),
               exact=True)
    _close(toolkit.jit(lambda x, r: map_coordinates(x, [r, COORD_COLS], 1, "wrap"))(IMAGE, COORD_ROWS),
           jax.jit(lambda x, r: jndimage.map_coordinates(x, [r, COORD_COLS], 1, "wrap"))(IMAGE, COORD_ROWS))


def test_map_coordinates_errors():
    coords = [COORD_ROWS, COORD_COLS]
    for args, kwargs, fragment in (((IMAGE, coords[:1], 1), {}, "coordinates must be a sequence of length"),
                                   ((IMAGE, coords, 1), {"mode": "grid-wrap"}, "does not yet support mode grid-wrap"),
                                   ((IMAGE, coords, 3), {}, "currently requires order<=1"),
                                   ((IMAGE, coords, 1), {"cval": np.ones(())}, "Non-hashable static arguments")):
        _same_error(lambda: map_coordinates(*args, **kwargs), lambda: jndimage.map_coordinates(*args, **kwargs),
                    fragment)
    # cval traced under jit: unhashable in JAX too (its jit's static argument).
    _same_error(lambda: toolkit.jit(lambda c: map_coordinates(IMAGE, coords, 1, cval=c))(1.0),
                lambda: jax.jit(lambda c: jndimage.map_coordinates(IMAGE, coords, 1, cval=c))(1.0),
                "Non-hashable static arguments")


# --- RegularGridInterpolator -----------------------------------------------------------------------------------

GRID = (np.array([0.0, 0.5, 2.0, 3.0], F), np.array([-1.0, 0.0, 4.0], F))
VALUES = RNG.normal(size=(4, 3)).astype(F)
VALUES_3D = RNG.normal(size=(4, 3, 2)).astype(F)
# Inside, on grid nodes and edges, midpoints (nearest's ties), outside on each side, nan.
XI = np.array([[0.2, -0.5], [0.0, -1.0], [3.0, 4.0], [1.25, 2.0], [0.25, -0.5], [-0.1, 0.0], [1.0, 4.5],
               [3.5, -2.0], [np.nan, 1.0], [2.0, 0.0]], F)


def _all_pairs(ours, theirs, **kwargs):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        _close(o, t, **kwargs)


def _interpolations(cls, values, values_3d, xi):
    """Methods, value shapes and dtypes, fill values, point layouts: one jitted program per library (eagerly each
    operation would compile per shape)."""
    out = []
    for v, fill_values in ((values, (np.nan, None, 0)), (values_3d, (-1.5,)), (values.astype(np.int32), (np.nan,))):
        for fill_value in fill_values:
            interpolator = cls(GRID, v, method="linear", fill_value=fill_value)
            out += [interpolator(xi), interpolator(xi, method="nearest")]
    out.append(cls(GRID, values_3d, method="nearest")(xi))
    interpolator = cls(GRID, values)
    # Coordinates as a tuple of arrays (broadcast together), one tuple, a batch shape, integer points.
    for points in ((xi[:, 0], xi[:, 1]), (xi[:, :1], xi[:3, 1]), (xi,), xi.reshape(2, 5, 2),
                   np.array([[0, 2], [1, -1]], np.int32)):
        out.append(interpolator(points))
    out.append(cls(GRID[:1], values[:, 0])(xi[:, 0]))  # a 1-d grid: 1-d points are a column
    grid_ints = (np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32))
    values_ints = np.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]], np.int32)
    out.append(cls(grid_ints, values_ints, fill_value=2.0)(np.array([[1.5, 4.5], [2.2, 5.8], [0.0, 5.0]], F)))
    return out


def test_regular_grid_interpolator_values():
    # Eagerly: linear with a nan fill, nearest on trailing value axes with extrapolation.
    for method, values, fill_value in (("linear", VALUES, np.nan),):
        ours = RegularGridInterpolator(GRID, values, method=method, fill_value=fill_value)
        theirs = jinterpolate.RegularGridInterpolator(GRID, values, method=method, fill_value=fill_value)
        _close(ours(XI), theirs(XI), exact=method == "nearest")
    _all_pairs(toolkit.jit(lambda *a: _interpolations(RegularGridInterpolator, *a))(VALUES, VALUES_3D, XI),
               jax.jit(lambda *a: _interpolations(jinterpolate.RegularGridInterpolator, *a))(VALUES, VALUES_3D, XI))


def test_regular_grid_interpolator_pytree_jit_grad():
    ours = RegularGridInterpolator(GRID, VALUES, method="nearest", fill_value=0.5)
    theirs = jinterpolate.RegularGridInterpolator(GRID, VALUES, method="nearest", fill_value=0.5)
    ours_leaves = toolkit.tree_util.tree_leaves(ours)
    theirs_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves) == 4
    for o, t in zip(ours_leaves, theirs_leaves):
        _close(o, t, exact=True)
    rebuilt = toolkit.tree_util.tree_map(lambda x: x * 2, ours)
    assert isinstance(rebuilt, RegularGridInterpolator) and rebuilt.method == "nearest"
    _close(toolkit.jit(lambda f, x: f(x))(ours, XI), jax.jit(lambda f, x: f(x))(theirs, XI), exact=True)

    def loss(cls):
        return lambda values, xi: cls(GRID, values)(xi).sum()

    inside = XI[:5]
    for argnums in (0, 1):
        _close(toolkit.jit(toolkit.grad(loss(RegularGridInterpolator), argnums=argnums))(VALUES, inside),
               jax.jit(jax.grad(loss(jinterpolate.RegularGridInterpolator), argnums=argnums))(VALUES, inside))
    _close(toolkit.jit(loss(RegularGridInterpolator))(VALUES, XI), jax.jit(loss(jinterpolate.RegularGridInterpolator))(VALUES, XI))


def test_regular_grid_interpolator_errors():
    def both(fragment, *args, call=None, **kwargs):
        def make(cls):
            def run():
                interpolator = cls(*args, **kwargs)
                return interpolator(call) if call is not None else interpolator
            return run
        _same_error(make(RegularGridInterpolator), make(jinterpolate.RegularGridInterpolator), fragment)

    both("method 'cubic' is not defined", GRID, VALUES, method="cubic")
    both("`bounds_error` takes no effect under JIT", GRID, VALUES, bounds_error=True)
    both("there are 2 point arrays, but values has 1 dimensions", GRID, VALUES[:, 0])
    both("fill_value must be either 'None' or of a type compatible", GRID, VALUES, fill_value=np.complex64(1j))
    both("requires ndarray or scalar arguments", GRID, VALUES.tolist())
    both("the requested sample points xi have dimension 3", GRID, VALUES, call=np.ones((2, 3), F))
    both("requires ndarray or scalar arguments", GRID, VALUES, call=[[0.5, 0.5]])
    _same_error(lambda: RegularGridInterpolator(GRID, VALUES)(XI, method="cubic"),
                lambda: jinterpolate.RegularGridInterpolator(GRID, VALUES)(XI, method="cubic"), "method 'cubic'")


# --- Rotation, Slerp -------------------------------------------------------------------------------------------

QUATS = np.concatenate([RNG.normal(size=(5, 4)), [[0.0, 0.0, 0.0, -2.0], [0.0, -1.0, 0.0, 0.0],
                                                   [1e-4, 0.0, 0.0, 1.0]]]).astype(F)
ROTVECS = np.concatenate([RNG.normal(size=(4, 3)), [[0.0, 0.0, 0.0], [3e-4, 0.0, 1e-4], [0.0, np.pi, 0.0]]]).astype(F)
ANGLES = np.array([[0.3, -1.2, 2.5], [90.0, 45.0, -30.0], [0.0, np.pi / 2, 0.0], [1.0, 0.0, -1.0]], F)
VECTORS = RNG.normal(size=(8, 3)).astype(F)


class _T:
    """toolkit's classes under jax.scipy.spatial.transform's names, so one lambda runs against both."""

    Rotation = Rotation
    Slerp = Slerp


def _same_rotation(ours, theirs, **kwargs):
    assert type(ours).__name__ == type(theirs).__name__ == "Rotation"
    _close(ours.quat, theirs.quat, **kwargs)


def _constructed(module, quats, matrices, rotvecs, angles):
    R = module.Rotation
    out = [R.from_quat(quats), R.from_quat(quats[0]), R.from_matrix(matrices), R.from_matrix(np.eye(3, dtype=F)),
           R.from_mrp(rotvecs), R.identity(), R.concatenate([R.from_quat(quats[:2]), R.from_quat(quats[2:])])]
    out += [R.from_rotvec(rotvecs), R.from_rotvec(rotvecs, True)]
    for seq, a, degrees in (("xyz", angles, False), ("ZYX", angles, True), ("zxz", angles[1], False),
                            ("yx", angles[:, :2], True), ("z", 90, True), ("x", np.array([[30], [40]], np.int32), False)):
        out.append(R.from_euler(seq, a, degrees))
    return [r.quat for r in out]


def test_rotation_constructors():
    matrices = np.asarray(jtransform.Rotation.from_quat(QUATS).as_matrix())
    args = QUATS, matrices, ROTVECS, ANGLES
    _all_pairs(toolkit.jit(lambda *a: _constructed(_T, *a))(*args), jax.jit(lambda *a: _constructed(jtransform, *a))(*args))
    # Eagerly, a few: each is many small operations.
    R, JR = Rotation, jtransform.Rotation
    _same_rotation(R.from_quat(QUATS), JR.from_quat(QUATS))
    _same_rotation(R.from_euler("zxz", ANGLES, True), JR.from_euler("zxz", ANGLES, True))
    _same_rotation(R.identity(), JR.identity(), exact=True)


def _converted(module, quats, vectors):
    rotations = module.Rotation.from_quat(quats)
    single = rotations[1]
    out = [rotations.as_matrix(), rotations.as_mrp(), rotations.magnitude(), rotations.inv().quat,
           single.as_matrix(), single.as_euler("xyz"), single.as_rotvec(), single.apply(vectors[0], True)]
    out += [rotations.as_quat(), rotations.as_quat(canonical=True, scalar_first=True), rotations.as_rotvec(True)]
    out += [rotations.as_euler(seq, degrees) for seq, degrees in (("xyz", False), ("ZXY", True), ("XYX", False))]
    # Gimbal lock of Euler angles.
    out.append(module.Rotation.from_euler("xyz", np.array([0.0, np.pi / 2, 0.0], F)).as_euler("xyz"))
    out += [rotations.apply(vectors), rotations[2:4].apply(vectors[:2], inverse=True)]
    out += [(rotations * rotations[::-1]).quat, (rotations * rotations[0]).quat, rotations[np.array([0, 2])].quat]
    for weights in (np.linspace(0.5, 2.0, 8).astype(F), [1, 2, 3, 4, 5, 6, 7, 8]):
        out.append(rotations.mean(weights).as_matrix())  # a quaternion's sign is arbitrary, its matrix is not
    return out


def test_rotation_methods():
    _all_pairs(toolkit.jit(lambda *a: _converted(_T, *a))(QUATS, VECTORS),
               jax.jit(lambda *a: _converted(jtransform, *a))(QUATS, VECTORS), rtol=1e-5, atol=1e-5)
    ours, theirs = Rotation.from_quat(QUATS), jtransform.Rotation.from_quat(QUATS)
    # Eagerly, a few.
    _close(ours.as_matrix(), theirs.as_matrix())
    _close(ours.as_euler("zxz", True), theirs.as_euler("zxz", True), rtol=1e-5, atol=1e-5)
    _close(ours.mean().as_matrix(), theirs.mean().as_matrix(), rtol=1e-5, atol=1e-5)
    assert len(ours) == len(theirs) == 8
    assert ours.single == theirs.single is False and ours[0].single == theirs[0].single is True


def test_rotation_pytree_jit_grad():
    ours, theirs = Rotation.from_quat(QUATS), jtransform.Rotation.from_quat(QUATS)
    leaves, treedef = toolkit.tree_util.tree_flatten_with_path(ours[0])
    jleaves, _ = jax.tree_util.tree_flatten_with_path(theirs[0])
    assert [str(path) for path, _ in leaves] == [str(path) for path, _ in jleaves] == ["(GetAttrKey(name='quat'),)"]
    rebuilt = toolkit.tree_util.tree_unflatten(treedef, [leaf for _, leaf in leaves])
    assert isinstance(rebuilt, Rotation) and rebuilt.quat is leaves[0][1]

    def composed(module):
        return lambda r, v: (r * module.Rotation.from_rotvec(v)).as_euler("zyx")

    _close(toolkit.jit(composed(_T))(ours, ROTVECS[:1]),
           jax.jit(composed(jtransform))(theirs, ROTVECS[:1]), rtol=1e-5, atol=1e-5)
    out = toolkit.jit(lambda r: r.inv())(ours)
    assert isinstance(out, Rotation)
    _same_rotation(out, theirs.inv())

    def loss(module):
        return lambda v: module.Rotation.from_rotvec(v).apply(VECTORS[:4]).sum() + module.Rotation.from_rotvec(
            v).magnitude().sum()

    rotvecs = ROTVECS[:4]
    _close(toolkit.jit(toolkit.grad(loss(_T)))(rotvecs), jax.jit(jax.grad(loss(jtransform)))(rotvecs), rtol=1e-5,
           atol=1e-5)
    _close(toolkit.vmap(lambda q: Rotation.from_quat(q).as_matrix())(QUATS),
           jax.vmap(lambda q: jtransform.Rotation.from_quat(q).as_matrix())(QUATS))


def test_slerp():
    keys = np.array([[90, 0, 0], [0, 45, 0], [0, 0, -30], [10, 20, 30]], F)
    times = [0, 1, 2.5, 3]
    ours = Slerp.init(times, Rotation.from_euler("zxy", keys, degrees=True))
    theirs = jtransform.Slerp.init(times, jtransform.Rotation.from_euler("zxy", keys, degrees=True))
    for o, t in zip(ours, theirs):
        if isinstance(o, Rotation):
            _same_rotation(o, t)
        else:
            _close(o, t, rtol=1e-5, atol=1e-5)
    at = np.array([0, 0.5, 1, 1.7, 2.5, 3, -0.5, 3.5], F)
    for t in (at, 1.2):  # a stack, a single rotation
        _same_rotation(toolkit.jit(lambda s, t: s(t))(ours, t), jax.jit(lambda s, t: s(t))(theirs, t), rtol=1e-5,
                       atol=1e-5)
    leaves = toolkit.tree_util.tree_leaves(ours)
    assert len(leaves) == len(jax.tree_util.tree_leaves(theirs)) == 4


def test_rotation_and_slerp_errors():
    rotations = Rotation.from_quat(QUATS), jtransform.Rotation.from_quat(QUATS)
    cases = [
        (lambda m, r: m.Rotation.from_euler("xy", [1, 2]), "atleast_1d requires ndarray or scalar arguments"),
        (lambda m, r: m.Rotation.from_euler("x", np.ones(2, F)), "inconsistent size for core dimension"),
        (lambda m, r: m.Rotation.from_euler("xyzx", [1, 2, 3, 4]), "non-empty string of upto 3 characters"),
        (lambda m, r: m.Rotation.from_euler("xYz", [1, 2, 3]), "Expected axes from `seq` to be from"),
        (lambda m, r: m.Rotation.from_euler("xxy", [1, 2, 3]), "Expected consecutive axes to be different"),
        (lambda m, r: r.as_euler("xy"), "Expected 3 axes, got xy"),
        (lambda m, r: r.as_euler("xYz"), "Expected axes from `seq`"),
        (lambda m, r: r.as_euler("zzy"), "Expected consecutive axes to be different"),
        (lambda m, r: r[0][0], "Single rotation is not subscriptable"),
        (lambda m, r: len(r[0]), "Single rotation has no len"),
        (lambda m, r: r.mean(np.ones((2, 4), F)), "Expected `weights` to be 1 dimensional"),
        (lambda m, r: r.mean(np.ones(3, F)), "got 3 values and 8 rotations"),
        (lambda m, r: r[0].mean(), "Single rotation has no len"),
        (lambda m, r: m.Rotation.random(None), ""),
        (lambda m, r: m.Rotation.identity(3), ""),
        (lambda m, r: m.Slerp.init([0, 1], r.quat[:2]), "`rotations` must be a `Rotation` instance"),
        (lambda m, r: m.Slerp.init([0], r[:1]), "must be a sequence of at least 2 rotations"),
        (lambda m, r: m.Slerp.init([0, 1], r[0]), "must be a sequence of at least 2 rotations"),
        (lambda m, r: m.Slerp.init([[0, 1]], r[:2]), "Expected times to be specified in a 1 dimensional array"),
        (lambda m, r: m.Slerp.init([0, 1, 2], r[:2]), "got 2 rotations and 3 timestamps"),
        (lambda m, r: m.Slerp.init([0, 1], r[:2])(np.ones((2, 2), F)), "`times` must be at most 1-dimensional"),
    ]
    for case, fragment in cases:
        _same_error(lambda: case(_T, rotations[0]), lambda: case(jtransform, rotations[1]), fragment)
