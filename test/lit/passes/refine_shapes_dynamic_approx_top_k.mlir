// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// JAX's custom_call @stablehlo.dynamic_approx_top_k(operand, iota, init value,
// init index, k, result shapes...) (lax.approx_max_k with a symbolic k):
// refined from its shape operands, then, with k a constant, the static
// @ApproxTopK XLA knows — the four data operands, k as `top_k` in its config.
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.custom_call @ApproxTopK(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) {called_computations = [@comparator], mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 3 : i64}}
// CHECK-SAME: (tensor<2x8xf32>, tensor<2x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.custom_call @stablehlo.dynamic_approx_top_k({{.*}}) -> (tensor<2x3xf32>, tensor<2x3xi32>)
func.func @main(%arg0: tensor<2x8xf32>) -> (tensor<2x?xf32>, tensor<2x?xi32>) {
  %iota = stablehlo.iota dim = 1 : tensor<2x8xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %index = stablehlo.constant dense<-1> : tensor<i32>
  %k = stablehlo.constant dense<3> : tensor<i32>
  %shape = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%arg0, %iota, %init, %index, %k, %shape, %shape) {called_computations = [@comparator], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64}} : (tensor<2x8xf32>, tensor<2x8xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2x?xf32>, tensor<2x?xi32>)
  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x?xi32>
}
func.func @comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
