# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/reductions.py: one `stablehlo.reduce` with a one-op body.

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def monoids():
    # CHECK-LABEL: TEST: monoids
    # CHECK: stablehlo.constant dense<0.000000e+00> : tensor<f32>
    # CHECK: stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    print(lowered_text(lambda x: lax.reduce_sum(x, (1,)), spec((2, 3))))
    # CHECK: dense<1.000000e+00>
    # CHECK: applies stablehlo.multiply across dimensions = [0, 1]
    print(lowered_text(lambda x: lax.reduce_prod(x, (0, 1)), spec((2, 3))))
    # CHECK: dense<0xFF800000>
    # CHECK: applies stablehlo.maximum
    print(lowered_text(lambda x: lax.reduce_max(x, (0,)), spec((2, 3))))
    # CHECK: dense<2147483647> : tensor<i32>
    # CHECK: applies stablehlo.minimum
    print(lowered_text(lambda x: lax.reduce_min(x, (0,)), spec((2, 3), "int32")))
    # CHECK: dense<true> : tensor<i1>
    # CHECK: applies stablehlo.and
    print(lowered_text(lambda x: lax.reduce_and(x, (0,)), spec((4,), "bool")))
    # CHECK: dense<false> : tensor<i1>
    # CHECK: applies stablehlo.or
    print(lowered_text(lambda x: lax.reduce_or(x, (0,)), spec((4,), "bool")))
    # CHECK: applies stablehlo.xor
    print(lowered_text(lambda x: lax.reduce_xor(x, (0,)), spec((4,), "uint8")))


@run
def argmax():
    # CHECK-LABEL: TEST: argmax
    # A variadic reduce over (value, index); NaN wins and ties keep the lower index.
    # CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<2x5xi32>
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}), (%[[IOTA]] init: %{{.*}}) across dimensions = [1] {{.*}} -> (tensor<2xf32>, tensor<2xi32>)
    # CHECK: stablehlo.compare  GT
    # CHECK: stablehlo.compare  NE
    # CHECK: stablehlo.compare  EQ
    # CHECK: stablehlo.compare  LT
    # CHECK: return %{{.*}}#1 : tensor<2xi32>
    print(lowered_text(lambda x: lax.argmax(x, 1), spec((2, 5))))
    # CHECK: stablehlo.compare  LT
    print(lowered_text(lambda x: lax.argmin(x, 0), spec((5,), "int32")))


@run
def complex_extrema():
    # CHECK-LABEL: TEST: complex_extrema
    # By real part, then imaginary part (JAX's order), from (-inf, 0) for a maximum and (inf, 0) for a minimum.
    # CHECK: stablehlo.constant dense<(0xFF800000,0.000000e+00)> : tensor<complex<f32>>
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) across dimensions = [0] : (tensor<2x3xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    # CHECK: reducer(%[[A:.*]]: tensor<complex<f32>>, %[[B:.*]]: tensor<complex<f32>>)
    # CHECK: %[[RA:.*]] = stablehlo.real %[[A]]
    # CHECK: %[[RB:.*]] = stablehlo.real %[[B]]
    # CHECK: stablehlo.compare  EQ, %[[RA]], %[[RB]],  FLOAT
    # CHECK: stablehlo.compare  GT
    # CHECK: stablehlo.compare  GT
    # CHECK: %[[PICK:.*]] = stablehlo.select
    # CHECK: %[[OUT:.*]] = stablehlo.select %[[PICK]], %[[A]], %[[B]] : tensor<i1>, tensor<complex<f32>>
    # CHECK: stablehlo.return %[[OUT]]
    # CHECK-NOT: stablehlo.maximum
    print(lowered_text(lambda x: lax.reduce_max(x, (0,)), spec((2, 3), "complex64")))
    # CHECK: stablehlo.constant dense<(0x7F800000,0.000000e+00)> : tensor<complex<f32>>
    # CHECK: stablehlo.compare  LT
    # CHECK-NOT: stablehlo.minimum
    print(lowered_text(lambda x: lax.reduce_min(x, (1,)), spec((2, 3), "complex64")))
