# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/indexing.py and of numpy indexing (toolkit/numpy/indexing.py).

import numpy as np

import toolkit.numpy as tnp
from toolkit import lax
from toolkit.testing import lowered_text, run, spec

ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROW_UPDATES = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))


@run
def gather_clip():
    # CHECK-LABEL: TEST: gather_clip
    # CHECK: "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
    # CHECK-NOT: stablehlo.select
    # CHECK: return
    print(lowered_text(lambda x, i: lax.gather(x, i, ROWS, (1, 3), mode="clip"), spec((4, 3)), spec((2, 1), "int32")))


@run
def gather_fill():
    # CHECK-LABEL: TEST: gather_fill
    # CHECK: %[[G:.*]] = "stablehlo.gather"(%arg0, %arg1)
    # CHECK: stablehlo.compare GE, %arg1
    # CHECK: stablehlo.compare LE, %arg1
    # CHECK: stablehlo.reduce({{.*}}) applies stablehlo.and across dimensions = [1]
    # CHECK: %[[MASK:.*]] = stablehlo.broadcast_in_dim {{.*}}, dims = [0] : (tensor<2xi1>) -> tensor<2x3xi1>
    # CHECK: stablehlo.constant dense<0x7FC00000> : tensor<f32>
    # CHECK: stablehlo.select %[[MASK]], %[[G]]
    print(lowered_text(lambda x, i: lax.gather(x, i, ROWS, (1, 3), mode="fill"), spec((4, 3)), spec((2, 1), "int32")))


@run
def scatter_variants():
    # CHECK-LABEL: TEST: scatter_variants
    # CHECK: "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    # CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
    # CHECK-NEXT: stablehlo.return %[[B]] : tensor<f32>
    # CHECK: stablehlo.add
    # CHECK: stablehlo.multiply
    # CHECK: stablehlo.minimum
    # CHECK: stablehlo.maximum
    for fn in (lax.scatter, lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max):
        print(lowered_text(lambda x, i, u: fn(x, i, u, ROW_UPDATES), spec((4, 3)), spec((2, 1), "int32"),
                           spec((2, 3))))


@run
def scatter_min_max_of_complex_values():
    # JAX's order of complex numbers in the update region: real parts, then imaginary parts on a tie.
    # CHECK-LABEL: TEST: scatter_min_max_of_complex_values
    # CHECK: "stablehlo.scatter"(%arg0, %arg1, %arg2)
    # CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<complex<f32>>, %[[B:.*]]: tensor<complex<f32>>):
    # CHECK-DAG: %[[RA:.*]] = stablehlo.real %[[A]]
    # CHECK-DAG: %[[RB:.*]] = stablehlo.real %[[B]]
    # CHECK-DAG: %[[IA:.*]] = stablehlo.imag %[[A]]
    # CHECK-DAG: %[[IB:.*]] = stablehlo.imag %[[B]]
    # CHECK-DAG: %[[EQ:.*]] = stablehlo.compare EQ, %[[RA]], %[[RB]], FLOAT
    # CHECK-DAG: %[[LTI:.*]] = stablehlo.compare LT, %[[IA]], %[[IB]], FLOAT
    # CHECK-DAG: %[[LTR:.*]] = stablehlo.compare LT, %[[RA]], %[[RB]], FLOAT
    # CHECK: %[[PICK:.*]] = stablehlo.select %[[EQ]], %[[LTI]], %[[LTR]]
    # CHECK: %[[MIN:.*]] = stablehlo.select %[[PICK]], %[[A]], %[[B]]
    # CHECK-NEXT: stablehlo.return %[[MIN]]
    # CHECK-NOT: stablehlo.minimum
    # CHECK: "stablehlo.scatter"
    # CHECK: stablehlo.compare GT
    # CHECK-NOT: stablehlo.maximum
    for fn in (lax.scatter_min, lax.scatter_max):
        print(lowered_text(lambda x, i, u: fn(x, i, u, ROW_UPDATES), spec((4, 3), "complex64"), spec((2, 1), "int32"),
                           spec((2, 3), "complex64")))


@run
def scatter_clip_clamps_indices():
    # CHECK-LABEL: TEST: scatter_clip_clamps_indices
    # CHECK: %[[C:.*]] = stablehlo.clamp {{.*}}, %arg1, {{.*}} : tensor<2x1xi32>
    # CHECK: "stablehlo.scatter"(%arg0, %[[C]], %arg2)
    print(lowered_text(lambda x, i, u: lax.scatter_add(x, i, u, ROW_UPDATES, mode="clip"), spec((4, 3)),
                       spec((2, 1), "int32"), spec((2, 3))))


@run
def numpy_static_indexing_is_slices():
    # CHECK-LABEL: TEST: numpy_static_indexing_is_slices
    # CHECK: stablehlo.reverse %arg0, dims = [1]
    # CHECK: stablehlo.slice %{{.*}} [1:3, 0:3:2, 3:4]
    # CHECK: stablehlo.reshape {{.*}} -> tensor<2x2xf32>
    # CHECK-NOT: gather
    print(lowered_text(lambda x: x[1:, ::-2, 3], spec((3, 4, 5))))


@run
def numpy_traced_scalar_index():
    # CHECK-LABEL: TEST: numpy_traced_scalar_index
    # CHECK: stablehlo.select
    # CHECK: stablehlo.dynamic_slice %arg0, {{.*}}, sizes = [1, 4] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    print(lowered_text(lambda x, i: x[i], spec((3, 4)), spec((), "int32")))


@run
def numpy_array_index_is_gather():
    # CHECK-LABEL: TEST: numpy_array_index_is_gather
    # CHECK: stablehlo.constant dense<{{\[\[}}1], [3]]> : tensor<2x1xi32>
    # CHECK: "stablehlo.gather"(%arg0, %{{.*}}) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>
    print(lowered_text(lambda x: x[:, [1, 3]], spec((3, 4, 5))))


@run
def numpy_at_add_is_scatter():
    # CHECK-LABEL: TEST: numpy_at_add_is_scatter
    # CHECK: "stablehlo.scatter"(%arg0, %{{.*}}, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}>
    # CHECK: stablehlo.add
    print(lowered_text(lambda x, i, u: x.at[i].add(u), spec((4, 3)), spec((2,), "int32"), spec((2, 3))))
