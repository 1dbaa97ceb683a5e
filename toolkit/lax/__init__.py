"""``toolkit.lax``: the primitive level. No implicit broadcasting or promotion:
operands must already agree, as with ``jax.lax``."""

from toolkit.lax.elementwise import *  # noqa: F401,F403  (the family's user functions, family.functions)
from toolkit.lax.linalg import dot, dot_general  # noqa: F401
from toolkit.lax.fourier import FftType, fft  # noqa: F401
from toolkit.lax.reductions import (  # noqa: F401
    argmax, argmin, reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_xor,
)
from toolkit.lax.structural import (  # noqa: F401
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, dynamic_slice, dynamic_update_slice, full, iota,
    pad, reshape, rev, slice, transpose,
)
from toolkit.lax.control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from toolkit.lax.indexing import (  # noqa: F401
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter, scatter_add, scatter_max,
    scatter_min, scatter_mul,
)
from toolkit.lax.sorting import argsort, sort, top_k  # noqa: F401
from toolkit.lax.sharding import with_sharding_constraint  # noqa: F401,E402
from toolkit.lax.convolution import (  # noqa: F401
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, padtype_to_pads,
)
from toolkit.lax.windowed import (  # noqa: F401
    cummax, cummin, cumprod, cumsum, reduce, reduce_window, reduce_window_max, reduce_window_min, reduce_window_sum,
)
from toolkit.lax.random_bits import RandomAlgorithm, rng_bit_generator  # noqa: F401
from toolkit.lax.convolution import Precision  # noqa: F401,E402  (jax.lax.Precision: dot and conv precision)
from toolkit.lax.custom_call import custom_call  # noqa: F401
from toolkit.lax.parallel import (  # noqa: F401,E402
    all_gather, all_to_all, axis_index, axis_size, pcast, pmax, pmean, pmin, ppermute, pshuffle, psum, psum_scatter,
    pswapaxes, pvary,
)
# jax.lax's wrappers over the primitives, each in its family's file (square, reciprocal: the elementwise star)
from toolkit.lax.structural import (  # noqa: F401,E402
    broadcast_to_rank, collapse, dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim, expand_dims, full_like, index_in_dim, slice_in_dim, squeeze,
)
from toolkit.lax.sorting import sort_key_val  # noqa: F401,E402
from toolkit.lax.linalg import batch_matmul  # noqa: F401,E402
from toolkit.lax.windowed import cumlogsumexp  # noqa: F401,E402
from toolkit.lax.control_flow import associative_scan, map  # noqa: F401,E402
from toolkit.lax.autodiff import stop_gradient  # noqa: F401,E402
from toolkit.lax.structural import split  # noqa: F401,E402  (jax.lax.split: one equation, transposed to a concatenate)
# jax.lax names issue 23 added: array helpers, compiler controls, convolution shapes (toolkit/lax/<topic>.py)
from toolkit.lax.array_helpers import (  # noqa: F401,E402
    RoundingMethod, broadcast_like, broadcast_shapes, dtype, empty, index_take, scatter_apply, scatter_sub,
    shape_as_value, stack, stage, tile, unstack,
)
from toolkit.lax.compiler_controls import dce_sink, optimization_barrier, reduce_precision, rng_uniform  # noqa: F401,E402
from toolkit.lax.tokens import after_all, create_token  # noqa: F401,E402  (XLA tokens as values)
from toolkit.lax.convolution_shapes import (  # noqa: F401,E402
    ConvGeneralDilatedDimensionNumbers, conv_general_dilated_local, conv_general_dilated_patches,
    conv_general_permutations, conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, reduce_window_shape_tuple,
)
from toolkit.lax.special_functions import (  # noqa: F401,E402
    bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a, igammac, polygamma, random_gamma_grad, zeta,
)
from toolkit.lax.dot_algorithms import (  # noqa: F401,E402
    AccuracyMode, DotAlgorithm, DotAlgorithmPreset, DotDimensionNumbers, PrecisionLike, RaggedDotDimensionNumbers,
    Tolerance,
)
from toolkit.lax.custom_solves import custom_linear_solve, custom_root  # noqa: F401,E402  (installed by toolkit.ad)
from toolkit.lax.platform_dispatch import platform_dependent  # noqa: F401,E402
from toolkit.lax.composites import composite  # noqa: F401,E402
from toolkit.lax.approximate_top_k import approx_max_k, approx_min_k  # noqa: F401,E402
from toolkit.lax.ragged_dot import ragged_dot, ragged_dot_general  # noqa: F401,E402
from toolkit.lax.scaled_dot import scaled_dot  # noqa: F401,E402
