// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// Custom calls with shape operands (`indices_of_shape_operands`, JAX's
// mlir.custom_call(result_shapes=...)): results are refined from the constant
// shape operands; in mode=jax the shape operands, their operand_layouts and
// the attribute are then dropped, as jaxlib's refinement does (the kernel
// takes only the data operands). mode=stablehlo keeps them, as the C++
// stablehlo-refine-shapes pass does.

// A LAPACK getrf (jax.numpy.linalg.inv): one shape operand per result.
// CHECK-LABEL: func.func @main
// CHECK: %[[LU:.*]]:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%arg0)
// CHECK-NOT: indices_of_shape_operands
// CHECK-SAME: operand_layouts = [dense<[0, 1]> : tensor<2xindex>]
// CHECK-SAME: output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>]
// CHECK-SAME: (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.custom_call @lapack_sgetrf_ffi(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {indices_of_shape_operands = dense<[1, 2, 3]>
// UPSTREAM-SAME: (tensor<3x3xf32>, tensor<2xi32>, tensor<1xi32>, tensor<0xi32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<i32>)
func.func @main(%arg0: tensor<3x3xf32>) -> (tensor<?x?xf32>, tensor<?xi32>, tensor<i32>) {
  %bound = stablehlo.constant dense<[3, 3]> : tensor<2xi64>
  %a = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x?xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %nn = stablehlo.concatenate %n1, %n1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %scalar = stablehlo.constant dense<> : tensor<0xi32>
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a, %nn, %n1, %scalar) {indices_of_shape_operands = dense<[1, 2, 3]> : tensor<3xi64>, mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<?x?xf32>, tensor<2xi32>, tensor<1xi32>, tensor<0xi32>) -> (tensor<?x?xf32>, tensor<?xi32>, tensor<i32>)
  return %0#0, %0#1, %0#2 : tensor<?x?xf32>, tensor<?xi32>, tensor<i32>
}

// -----

// A shape operand placed before an aliased operand: the alias is renumbered
// to the operand's new position (1 -> 0). (jaxlib 0.10.2's C++ refinement
// keeps operand_index = 1 here and fails verification.)
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.custom_call @solve(%arg0)
// CHECK-SAME: operand_layouts = [dense<[0, 1]> : tensor<2xindex>]
// CHECK-SAME: output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]
// CHECK-SAME: (tensor<2x5xf32>) -> tensor<2x5xf32>
func.func @main(%arg0: tensor<2x5xf32>) -> tensor<?x5xf32> {
  %bound = stablehlo.constant dense<[2, 5]> : tensor<2xi64>
  %b = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<?x5xf32>
  %shape = stablehlo.constant dense<[2, 5]> : tensor<2xi32>
  %0 = stablehlo.custom_call @solve(%shape, %b) {indices_of_shape_operands = dense<0> : tensor<1xi64>, operand_layouts = [dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2xi32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// A tuple result is refined element by element but keeps its shape operands
// (StableHLO's canonicalization only drops them for tensor results).
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.custom_call @pair(%arg0, %{{.*}}, %{{.*}}) {indices_of_shape_operands = dense<[1, 2]>
// CHECK-SAME: -> tuple<tensor<4xf32>, tensor<2xi32>>
func.func @main(%arg0: tensor<4xf32>) -> tuple<tensor<?xf32>, tensor<?xi32>> {
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %two = stablehlo.constant dense<2> : tensor<1xi32>
  %0 = stablehlo.custom_call @pair(%arg0, %four, %two) {indices_of_shape_operands = dense<[1, 2]> : tensor<2xi64>} : (tensor<4xf32>, tensor<1xi32>, tensor<1xi32>) -> tuple<tensor<?xf32>, tensor<?xi32>>
  return %0 : tuple<tensor<?xf32>, tensor<?xi32>>
}

// -----

// ApproxTopK with a constant k but a symbolic batch (jax.lax.approx_max_k):
// the four data operands are what XLA's ApproxTopK expects.
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.custom_call @ApproxTopK(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) {called_computations = [@comparator]
// CHECK-NOT: indices_of_shape_operands
// CHECK-SAME: (tensor<3x8xf32>, tensor<3x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x4xf32>, tensor<3x4xi32>)
func.func @main(%arg0: tensor<3x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xi32>) {
  %iota = stablehlo.iota dim = 1 : tensor<3x8xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %index = stablehlo.constant dense<-1> : tensor<i32>
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%arg0, %iota, %init, %index, %shape, %shape) {called_computations = [@comparator], indices_of_shape_operands = dense<[4, 5]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 4 : i64}} : (tensor<3x8xf32>, tensor<3x8xi32>, tensor<f32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<?x4xf32>, tensor<?x4xi32>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi32>
}
func.func @comparator(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
