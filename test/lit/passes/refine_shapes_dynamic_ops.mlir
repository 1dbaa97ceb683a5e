// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// StableHLO's dynamic ops become their static forms once their shape operands
// fold to constants (mode=jax, as jaxlib's canonicalize-dynamism does);
// mode=stablehlo keeps them and refines their result types only. Each input
// is made dynamic by the operand wrapper toolkit-bind-shapes writes.

// dynamic_reshape -> reshape
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.reshape %arg0 : (tensor<6x4xf32>) -> tensor<12x2xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.dynamic_reshape {{.*}} -> tensor<12x2xf32>
func.func @main(%arg0: tensor<6x4xf32>) -> tensor<?x2xf32> {
  %bound = stablehlo.constant dense<[6, 4]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %rows = stablehlo.multiply %d, %two : tensor<i32>
  %rows1 = stablehlo.reshape %rows : (tensor<i32>) -> tensor<1xi32>
  %two1 = stablehlo.reshape %two : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %rows1, %two1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %0 = stablehlo.dynamic_reshape %x, %shape : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// real_dynamic_slice -> slice (the last half: start = b / 2)
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.slice %arg0 [3:6] : (tensor<6xf32>) -> tensor<3xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.real_dynamic_slice {{.*}} -> tensor<3xf32>
func.func @main(%arg0: tensor<6xf32>) -> tensor<?xf32> {
  %bound = stablehlo.constant dense<6> : tensor<1xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %half = stablehlo.divide %d, %two : tensor<i32>
  %start = stablehlo.reshape %half : (tensor<i32>) -> tensor<1xi32>
  %limit = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %0 = stablehlo.real_dynamic_slice %x, %start, %limit, %one : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// dynamic_pad -> pad
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.pad %arg0, %{{.*}}, low = [1], high = [2], interior = [1] : (tensor<6xf32>, tensor<f32>) -> tensor<14xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.dynamic_pad {{.*}} -> tensor<14xf32>
func.func @main(%arg0: tensor<6xf32>) -> tensor<?xf32> {
  %bound = stablehlo.constant dense<6> : tensor<1xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %low = stablehlo.constant dense<1> : tensor<1xi32>
  %high = stablehlo.constant dense<2> : tensor<1xi32>
  %0 = stablehlo.dynamic_pad %x, %zero, %low, %high, %low : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// dynamic_gather -> gather (slice sizes from the symbolic width)
// CHECK-LABEL: func.func @main
// CHECK: "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<6x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: "stablehlo.dynamic_gather"{{.*}} -> tensor<2x4xf32>
func.func @main(%arg0: tensor<6x4xf32>, %arg1: tensor<2x1xi32>) -> tensor<2x?xf32> {
  %bound = stablehlo.constant dense<[6, 4]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %w = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x?xf32>) -> tensor<i32>
  %w1 = stablehlo.reshape %w : (tensor<i32>) -> tensor<1xi32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %sizes = stablehlo.concatenate %one, %w1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %0 = "stablehlo.dynamic_gather"(%x, %arg1, %sizes) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}> : (tensor<?x?xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// dynamic_conv -> convolution (padding from a dimension expression)
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.convolution(%arg0, %arg1)
// CHECK-SAME: pad = {{\[\[}}1, 1]]
// CHECK-SAME: (tensor<1x1x6xf32>, tensor<1x1x3xf32>) -> tensor<1x1x6xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: "stablehlo.dynamic_conv"{{.*}} -> tensor<1x1x6xf32>
func.func @main(%arg0: tensor<1x1x6xf32>, %arg1: tensor<1x1x3xf32>) -> tensor<1x1x?xf32> {
  %bound = stablehlo.constant dense<[1, 1, 6]> : tensor<3xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<1x1x6xf32>, tensor<3xi64>) -> tensor<1x1x?xf32>
  %padding = stablehlo.constant dense<1> : tensor<1x2xi32>
  %0 = "stablehlo.dynamic_conv"(%x, %arg1, %padding) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64}> : (tensor<1x1x?xf32>, tensor<1x1x3xf32>, tensor<1x2xi32>) -> tensor<1x1x?xf32>
  return %0 : tensor<1x1x?xf32>
}

// -----

// case: its results take the shape every branch yields.
// CHECK-LABEL: func.func @main
// CHECK: stablehlo.case
// CHECK: }) : (tensor<i32>) -> tensor<6xf32>
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: }) : (tensor<i32>) -> tensor<6xf32>
func.func @main(%arg0: tensor<6xf32>, %index: tensor<i32>) -> tensor<?xf32> {
  %bound = stablehlo.constant dense<6> : tensor<1xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  %0 = "stablehlo.case"(%index) ({
    stablehlo.return %x : tensor<?xf32>
  }, {
    %n = stablehlo.negate %x : tensor<?xf32>
    stablehlo.return %n : tensor<?xf32>
  }) : (tensor<i32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
