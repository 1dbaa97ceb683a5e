# RUN: %PYTHON %s | filecheck %s
# Golden lowering of lax.approx_max_k / approx_min_k (toolkit/lax/approximate_top_k.py): JAX's ApproxTopK custom
# call with its comparator, marked is_fallback off TPU (XLA computes the exact top k).

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def approx_max_k():
    # CHECK-LABEL: TEST: approx_max_k
    # CHECK: func.func @top_k_gt_f32_comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1>
    # CHECK: stablehlo.compare GT, %arg0, %arg1
    # CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<4x100xi32>
    # CHECK: stablehlo.custom_call @ApproxTopK(%arg0, %[[IOTA]], {{.*}}) {backend_config = "", called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 5 : i64}} : (tensor<4x100xf32>, tensor<4x100xi32>, tensor<f32>, tensor<i32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
    print(lowered_text(lambda x: lax.approx_max_k(x, 5), spec((4, 100))))


@run
def approx_min_k():
    # CHECK-LABEL: TEST: approx_min_k
    # CHECK: func.func @top_k_lt_f32_comparator
    # CHECK: stablehlo.compare LT
    # CHECK: stablehlo.constant dense<0x7F800000> : tensor<f32>
    # CHECK: @ApproxTopK
    print(lowered_text(lambda x: lax.approx_min_k(x, 2, reduction_dimension=0), spec((6, 3))))


@run
def approx_max_k_unaggregated():
    # CHECK-LABEL: TEST: approx_max_k_unaggregated
    # CHECK: stablehlo.custom_call @ApproxTopK({{.*}}) {backend_config = "", called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = false, is_fallback = true, recall_target = 0.899999976 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 50 : i64}} : (tensor<4x3000xf32>, tensor<4x3000xi32>, tensor<f32>, tensor<i32>) -> (tensor<4x768xf32>, tensor<4x768xi32>)
    print(lowered_text(lambda x: lax.approx_max_k(x, 50, recall_target=0.9, aggregate_to_topk=False),
                       spec((4, 3000))))
