// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// Dimension arithmetic folds; dynamic ops become static ops (mode=jax);
// mode=stablehlo only refines their result types.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT: get_dimension_size
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
// CHECK: %[[S:.*]] = stablehlo.add %[[X]], %[[B]] : tensor<3x4xf32>
// CHECK: return %[[S]]
// UPSTREAM-LABEL: func.func @main
// UPSTREAM: stablehlo.dynamic_broadcast_in_dim {{.*}} -> tensor<3x4xf32>
func.func @main(%x: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %d0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<3x4xf32>) -> tensor<i32>
  %d0r = stablehlo.reshape %d0 : (tensor<i32>) -> tensor<1xi32>
  %four = stablehlo.constant dense<4> : tensor<1xi32>
  %shape = stablehlo.concatenate %d0r, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %b = stablehlo.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  %sum = stablehlo.add %x, %b : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %sum : tensor<?x4xf32>
}

// -----

// jax.export's calling convention: the dimension variable is passed as a
// constant first argument; the callee is specialized without it.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> tensor<6xf32>
// CHECK: call @_wrapped_jax_export_main(%arg0) : (tensor<6xf32>) -> tensor<6xf32>
// CHECK-LABEL: func.func private @_wrapped_jax_export_main
// CHECK-SAME: (%arg0: tensor<6xf32>) -> tensor<6xf32>
// CHECK: stablehlo.iota dim = 0 : tensor<6xf32>
func.func public @main(%x: tensor<6xf32>) -> tensor<?xf32> {
  %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<6xf32>) -> tensor<i32>
  %wrapped = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%x, %b) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6xf32>, tensor<i32>) -> tensor<?xf32>
  %r = call @_wrapped_jax_export_main(%b, %x) : (tensor<i32>, tensor<6xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func private @_wrapped_jax_export_main(%b: tensor<i32> {jax.global_constant = "b"}, %x: tensor<6xf32>) -> tensor<?xf32> {
  %s = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
  %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  return %i : tensor<?xf32>
}

// -----

// A true shape assertion is erased.
// CHECK-LABEL: func.func @assertion_holds
// CHECK-NOT: shape_assertion
func.func @assertion_holds(%x: tensor<5xf32>) -> tensor<5xf32> {
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<5xf32>) -> tensor<i32>
  %c = stablehlo.constant dense<4> : tensor<i32>
  %ok = stablehlo.compare GE, %d, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %d) {error_message = "b = {0} must be >= 4", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<5xf32>
}

// -----

// while loops: block arguments and results take the operand types.
// CHECK-LABEL: func.func @loop
// CHECK: stablehlo.while{{.*}} : tensor<4xf32>
// CHECK: return {{.*}} : tensor<4xf32>
func.func @loop(%x: tensor<4xf32>) -> tensor<?xf32> {
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<?xf32>
  %1 = stablehlo.while(%it = %0) : tensor<?xf32>
  cond {
    %t = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %n = stablehlo.negate %it : tensor<?xf32>
    stablehlo.return %n : tensor<?xf32>
  }
  return %1 : tensor<?xf32>
}
