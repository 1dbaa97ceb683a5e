"""``toolkit.numpy``: numpy's API over toolkit arrays, traced inside ``jit``.

Functions broadcast like numpy and promote dtypes like JAX (Python scalars
are weakly typed, see ``toolkit.core.dtypes``).

The modules are layered, each importing only modules before it in this list:
``_core`` (arrays from inputs, promotion, broadcasting, joining), ``ufuncs``,
``rounding``, ``creation``, ``indexing`` (``x[idx]``), ``scatter`` (``x.at[idx]``),
``shapes``, ``take``, ``reductions``, ``sorting``, ``diagonals``, ``einsum``,
``tensor_contractions``, ``index_tricks``, ``nan_functions``, ``statistics``,
``signal``, ``nonzero_indices``, ``setops``, ``scalar_types`` (``float32(1.5)``), ``fft`` (``toolkit.numpy.fft``),
``array_api_namespace`` (``x.__array_namespace__()``, the Array API's dtype kinds) and ``methods``
(operators and array methods).
Above them (each importing only the lists' earlier modules): ``array_api_aliases``, ``spaced_values``
(``linspace``, ``logspace``, ``geomspace``), ``index_expressions`` (``r_``, ``mgrid``), ``element_functions``
(``frexp``, ``i0``, type predicates), ``array_editing`` (``delete``, ``insert``, ``put``, ``partition``),
``windows``, ``printing``, ``vectorization`` (``vectorize`` on ``toolkit.vmap``), ``padding`` (``pad``: its
statistic, ramp and callable modes use reductions, ``linspace`` and ``apply_along_axis``), ``universal_functions``
(JAX's ``ufunc`` objects: ``add.reduce``, ``multiply.outer``), ``bit_packing``, ``polynomials``, ``histograms`` (with ``cov``/``corrcoef``) and ``host_io`` (arrays from and to
host bytes and files: ``frombuffer``, ``load``, numpy's ``save``).
"""

from toolkit.core.dtypes import finfo, iinfo, promote_types, result_type  # noqa: F401
from toolkit.numpy.scalar_types import (  # noqa: F401
    bfloat16, bool_, character, cdouble, complex64, complex128, complex_, complexfloating, csingle, double, flexible,
    float4_e2m1fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
    float8_e5m2fnuz, float8_e8m0fnu, float16, float32, float64, float_, floating, generic, inexact, int2, int4, int8,
    int16, int32, int64, int_, integer, number, object_, signedinteger, single, uint, uint2, uint4, uint8, uint16,
    uint32, uint64, unsignedinteger,
)
from toolkit.numpy.scalar_types import bool_ as bool  # noqa: F401,A004  (jnp.bool, numpy 2's name)
from toolkit.numpy._core import asarray, broadcast_shapes  # noqa: F401
from toolkit.numpy.creation import (  # noqa: F401
    arange, array, copy, empty, empty_like, eye, from_dlpack, full, full_like, identity, ones, ones_like, tri,
    tril, triu, vander, zeros, zeros_like,
)
from toolkit.numpy.diagonals import diag, diagonal, trace  # noqa: F401
from toolkit.numpy.einsum import einsum, einsum_path  # noqa: F401
from toolkit.numpy.index_tricks import (  # noqa: F401
    diag_indices, diag_indices_from, indices, ix_, meshgrid, ravel_multi_index, tril_indices, tril_indices_from,
    triu_indices, triu_indices_from, unravel_index,
)
from toolkit.numpy.nan_functions import (  # noqa: F401
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar,
)
from toolkit.numpy.reductions import (  # noqa: F401
    all, allclose, amax, amin, any, argmax, argmin, array_equal, count_nonzero, cumprod, cumsum, cumulative_prod,
    cumulative_sum, max, mean, min, prod, std, sum, var,
)
from toolkit.numpy.nonzero_indices import argwhere, flatnonzero, nonzero, where  # noqa: F401
from toolkit.numpy.setops import intersect1d, isin, setdiff1d, setxor1d, union1d, unique  # noqa: F401
from toolkit.numpy.shapes import (  # noqa: F401
    append, array_split, atleast_1d, atleast_2d, atleast_3d, block, broadcast_arrays, broadcast_to, column_stack,
    concatenate,
    dstack, expand_dims, flip, fliplr, flipud, hsplit, hstack, matrix_transpose, moveaxis, permute_dims, ravel,
    repeat, reshape, roll, rollaxis, rot90, split, squeeze, stack, swapaxes, tile, transpose, unstack, vsplit, vstack,
)
from toolkit.numpy.padding import pad  # noqa: F401
from toolkit.numpy.signal import convolve, correlate, diff, ediff1d, gradient, interp, trapezoid, unwrap  # noqa: F401
from toolkit.numpy.sorting import argsort, lexsort, searchsorted, sort  # noqa: F401
from toolkit.numpy.statistics import (  # noqa: F401
    average, bincount, digitize, median, nanmedian, nanpercentile, nanquantile, percentile, ptp, quantile,
)
from toolkit.numpy.take import take, take_along_axis  # noqa: F401
from toolkit.numpy.tensor_contractions import (  # noqa: F401
    cross, dot, inner, kron, matmul, matvec, outer, tensordot, vdot, vecdot, vecmat,
)
from toolkit.numpy.ufuncs import (  # noqa: F401  (add, multiply, ...: the ufunc objects below)
    abs, absolute, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, bitwise_not, cbrt, ceil, clip, conj,
    conjugate, copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fabs, float_power,
    floor, floor_divide, fmax, fmin, fmod, greater, greater_equal, heaviside, hypot, imag, invert, isclose,
    isfinite, isinf, isnan, left_shift, less, less_equal, log, log1p, log2, log10, logical_not, mod, modf,
    nan_to_num, nextafter, not_equal, piecewise, positive, pow, power, rad2deg, radians, real, reciprocal,
    remainder, right_shift, rsqrt, select, sign, signbit, sin, sinc, sinh, sqrt, square, tan, tanh, true_divide,
    trunc,
)
from toolkit.numpy.universal_functions import (  # noqa: F401  (JAX's ufunc objects)
    add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp, logaddexp2, logical_and, logical_or,
    logical_xor, maximum, minimum, multiply, negative, subtract, ufunc,
)
from toolkit.numpy.rounding import around, rint, round  # noqa: F401
from toolkit.numpy.array_api_aliases import (  # noqa: F401
    acos, acosh, asin, asinh, astype, atan, atan2, atanh, bitwise_count, bitwise_invert, bitwise_left_shift,
    bitwise_right_shift, concat, isdtype, unique_all, unique_counts, unique_inverse, unique_values,
)
from toolkit.numpy.array_api_namespace import __array_api_version__, __array_namespace_info__  # noqa: F401
from toolkit.numpy.index_expressions import c_, index_exp, mask_indices, mgrid, ogrid, r_, s_  # noqa: F401
from toolkit.numpy.element_functions import (  # noqa: F401
    ComplexWarning, angle, can_cast, dtype, euler_gamma, frexp, gcd, i0, iscomplex, iscomplexobj, isneginf, isposinf,
    isreal, isrealobj, isscalar, issubdtype, iterable, lcm, ldexp, ndim, shape, size, sort_complex, spacing,
)
from toolkit.numpy.array_editing import (  # noqa: F401
    argpartition, array_equiv, choose, compress, delete, diagflat, dsplit, extract, fill_diagonal, insert, partition,
    place, put, put_along_axis, resize, trim_zeros,
)
from toolkit.numpy.windows import bartlett, blackman, hamming, hanning, kaiser  # noqa: F401
from toolkit.numpy.printing import array_repr, array_str, get_printoptions, printoptions, set_printoptions  # noqa: F401
from toolkit.numpy.spaced_values import geomspace, linspace, logspace  # noqa: F401
from toolkit.numpy.vectorization import apply_along_axis, apply_over_axes, fromfunction, vectorize  # noqa: F401
from toolkit.numpy.bit_packing import packbits, unpackbits  # noqa: F401
from toolkit.numpy.polynomials import (  # noqa: F401
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots,
)
from toolkit.numpy.host_io import frombuffer, fromfile, fromiter, fromstring, load, save, savez  # noqa: F401
from toolkit.numpy.histograms import (  # noqa: F401
    corrcoef, cov, histogram, histogram2d, histogram_bin_edges, histogramdd,
)
from toolkit.numpy import fft  # noqa: F401,E402  (toolkit.numpy.fft, jax.numpy.fft)
from toolkit.numpy import linalg  # noqa: F401,E402  (toolkit.numpy.linalg, jax.numpy.linalg)
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
    from toolkit.array import Array  # function-level: toolkit.array is a layer above numpy
    ndarray = Array
    _methods.install_all()


_install()
