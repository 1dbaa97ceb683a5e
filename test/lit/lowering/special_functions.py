# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/special_functions.py, as JAX 0.10.2 lowers jax.lax's special functions on CPU:
# polygamma, zeta and bessel_i1e are one CHLO op; igamma, igammac, igamma_grad_a, betainc and bessel_i0e expand
# into while loops (series, continued fractions) and Chebyshev sums.

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def polygamma_is_chlo():
    # CHECK-LABEL: TEST: polygamma_is_chlo
    # CHECK: chlo.polygamma %arg0, %arg1 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    print(lowered_text(lax.polygamma, spec((3,)), spec((3,))))


@run
def zeta_is_chlo():
    # CHECK-LABEL: TEST: zeta_is_chlo
    # CHECK: chlo.zeta %arg0, %arg1 : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    print(lowered_text(lax.zeta, spec((2, 2)), spec((2, 2))))


@run
def bessel_i1e_is_chlo():
    # CHECK-LABEL: TEST: bessel_i1e_is_chlo
    # CHECK: chlo.bessel_i1e %arg0 : tensor<4xf32> -> tensor<4xf32>
    print(lowered_text(lax.bessel_i1e, spec((4,))))


@run
def bessel_i0e_is_a_chebyshev_sum():
    # CHECK-LABEL: TEST: bessel_i0e_is_a_chebyshev_sum
    # CHECK-NOT: chlo.bessel
    # CHECK: stablehlo.abs %arg0
    # CHECK: stablehlo.sqrt
    # CHECK: stablehlo.compare  LE
    # CHECK: stablehlo.select
    print(lowered_text(lax.bessel_i0e, spec((4,))))


@run
def igamma_series_and_continued_fraction():
    # CHECK-LABEL: TEST: igamma_series_and_continued_fraction
    # CHECK: chlo.lgamma %arg0
    # The continued fraction carries 15 values, the series 7.
    # CHECK: stablehlo.while{{.*}} : tensor<3xi1>, tensor<3xf32>
    # CHECK: stablehlo.reduce
    # CHECK: stablehlo.while{{.*}} : tensor<3xi1>, tensor<3xf32>
    # CHECK: return {{.*}} : tensor<3xf32>
    print(lowered_text(lax.igamma, spec((3,)), spec((3,))))


@run
def igamma_grad_a_uses_digamma():
    # CHECK-LABEL: TEST: igamma_grad_a_uses_digamma
    # CHECK: stablehlo.while
    # CHECK: chlo.digamma
    print(lowered_text(lax.igamma_grad_a, spec((3,)), spec((3,))))


@run
def betainc_lentz_loop():
    # CHECK-LABEL: TEST: betainc_lentz_loop
    # One loop: a, b, x (closed over), the iteration counter, the convergence flag and the Lentz c, d, h.
    # CHECK: stablehlo.while{{.*}} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i32>, tensor<i1>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    # CHECK: chlo.lgamma
    print(lowered_text(lax.betainc, spec((2,)), spec((2,)), spec((2,))))


@run
def half_precision_computed_in_float32():
    # CHECK-LABEL: TEST: half_precision_computed_in_float32
    # CHECK: stablehlo.convert %arg0 : (tensor<3xf16>) -> tensor<3xf32>
    # CHECK: stablehlo.while
    # CHECK: stablehlo.convert {{.*}} : (tensor<3xf32>) -> tensor<3xf16>
    print(lowered_text(lax.igammac, spec((3,), "float16"), spec((3,), "float16")))
