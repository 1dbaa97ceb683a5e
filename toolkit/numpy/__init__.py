"""``toolkit.numpy``: numpy's API over toolkit arrays, traced inside ``jit``.

Functions broadcast like numpy and promote dtypes like JAX (Python scalars
are weakly typed, see ``toolkit.core.dtypes``).
"""

from toolkit.core.dtypes import (  # noqa: F401
    bfloat16, bool_, complex64, complex128, float16, float32, float64, int8, int16, int32, int64,
    uint8, uint16, uint32, uint64, finfo, iinfo, promote_types, result_type,
)
from toolkit.numpy._core import asarray, broadcast_shapes, broadcast_to  # noqa: F401
from toolkit.numpy.creation import (  # noqa: F401
    arange, array, empty, eye, full, full_like, identity, linspace, ones, ones_like, tri, zeros, zeros_like,
)
from toolkit.numpy.linalg import dot, inner, matmul, outer, tensordot, vdot  # noqa: F401
from toolkit.numpy.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, max, mean, min, prod, std, sum, var,
)
from toolkit.numpy.shapes import (  # noqa: F401
    atleast_1d, atleast_2d, broadcast_arrays, concatenate, expand_dims, hstack, moveaxis, ravel, reshape,
    squeeze, stack, swapaxes, transpose, vstack,
)
from toolkit.numpy.ufuncs import (  # noqa: F401
    abs, absolute, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around, bitwise_and,
    bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate, cos, cosh, divide, equal, exp, exp2,
    expm1, floor, floor_divide, fmod, greater, greater_equal, imag, invert, isfinite, isinf, isnan, left_shift,
    less, less_equal, log, log1p, logaddexp, logical_and, logical_not, logical_or, logical_xor, maximum, minimum,
    mod, multiply, negative, nextafter, not_equal, power, real, reciprocal, remainder, right_shift, round,
    rsqrt, sign, sin, sinh, sqrt, square, subtract, tan, tanh, true_divide, where,
)
from toolkit.numpy import methods as _methods

import numpy as _np

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
ndarray = None  # replaced below: the toolkit Array type


def _install() -> None:
    global ndarray
    from toolkit.array import Array
    ndarray = Array
    _methods.install_all()


_install()

from toolkit.numpy.extras import (  # noqa: F401,E402
    allclose, append, argsort, array_equal, array_split, column_stack, count_nonzero, cumprod, cumsum, diag,
    diagonal, diff, dstack, einsum, flip, fliplr, flipud, hsplit, isclose, meshgrid, pad, repeat, roll, rot90, sort,
    split, take, take_along_axis, tile, trace, tril, triu, vsplit,
)
from toolkit.numpy.extras import (  # noqa: F401,E402
    ix_, lexsort, ravel_multi_index, searchsorted, unravel_index,
)
from toolkit.numpy.more_math import (  # noqa: F401,E402
    copysign, deg2rad, degrees, divmod, fabs, float_power, fmax, fmin, gcd, heaviside, hypot, lcm, log2, log10,
    logaddexp2, modf, nan_to_num, piecewise, positive, pow, rad2deg, radians, rint, select, signbit, sinc, trunc,
)
from toolkit.numpy.nan_functions import (  # noqa: F401,E402
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar,
)
from toolkit.numpy.statistics import (  # noqa: F401,E402
    average, bincount, digitize, median, nanmedian, nanpercentile, nanquantile, percentile, ptp, quantile,
)
from toolkit.numpy.more_shapes import (  # noqa: F401,E402
    atleast_3d, block, cumulative_prod, cumulative_sum, diag_indices, diag_indices_from, indices, matrix_transpose,
    permute_dims, rollaxis, tril_indices, tril_indices_from, triu_indices, triu_indices_from, unstack,
)
from toolkit.numpy.products import cross, kron, matvec, vander, vecdot, vecmat  # noqa: F401,E402
from toolkit.numpy.signal import convolve, correlate, ediff1d, interp, trapezoid, unwrap  # noqa: F401,E402
from toolkit.numpy.setops import isin  # noqa: F401,E402
