// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-simplify)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-simplify{ieee-strict=true})' | filecheck %s --check-prefix=STRICT

// x + 0 -> x (both operand orders)
// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
// STRICT-LABEL: func.func @add_zero
// STRICT: stablehlo.add
func.func @add_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %zero : tensor<4xf32>
  %1 = stablehlo.add %zero, %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// x + 0 -> x is exact for integers, so strict mode keeps it.
// CHECK-LABEL: func.func @add_zero_int
// CHECK-NEXT: return %arg0
// STRICT-LABEL: func.func @add_zero_int
// STRICT-NEXT: return %arg0
func.func @add_zero_int(%x: tensor<3xi32>) -> tensor<3xi32> {
  %zero = stablehlo.constant dense<0> : tensor<3xi32>
  %0 = stablehlo.add %x, %zero : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// x * 1 -> x, 1 * x -> x
// CHECK-LABEL: func.func @multiply_one
// CHECK-NOT: stablehlo.multiply
// CHECK: return %arg0, %arg0
func.func @multiply_one(%x: tensor<2x2xf64>) -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %one = stablehlo.constant dense<1.0> : tensor<2x2xf64>
  %0 = stablehlo.multiply %x, %one : tensor<2x2xf64>
  %1 = stablehlo.multiply %one, %x : tensor<2x2xf64>
  return %0, %1 : tensor<2x2xf64>, tensor<2x2xf64>
}

// -----

// x - 0 -> x, but 0 - x stays.
// CHECK-LABEL: func.func @subtract_zero
// CHECK: %[[NEG:.*]] = stablehlo.subtract %{{.*}}, %arg0
// CHECK: return %arg0, %[[NEG]]
func.func @subtract_zero(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %zero = stablehlo.constant dense<0> : tensor<4xi64>
  %0 = stablehlo.subtract %x, %zero : tensor<4xi64>
  %1 = stablehlo.subtract %zero, %x : tensor<4xi64>
  return %0, %1 : tensor<4xi64>, tensor<4xi64>
}

// -----

// Not a neutral element: nothing changes.
// CHECK-LABEL: func.func @no_match
// CHECK: stablehlo.add
// CHECK: stablehlo.multiply
func.func @no_match(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %two : tensor<4xf32>
  %1 = stablehlo.multiply %0, %two : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Broadcasting x + 0 would change the type: not rewritten.
// CHECK-LABEL: func.func @type_changing
// CHECK: stablehlo.add
func.func @type_changing(%x: tensor<1xf32>, %y: tensor<1xf32>) -> tensor<1xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<1xf32>
  %0 = stablehlo.add %y, %zero : tensor<1xf32>
  %1 = stablehlo.add %x, %0 : tensor<1xf32>
  return %1 : tensor<1xf32>
}

// -----

// transpose(transpose(x, p), q) -> x when the permutations cancel
// CHECK-LABEL: func.func @transpose_cancel
// CHECK-NOT: stablehlo.transpose
// CHECK: return %arg0
func.func @transpose_cancel(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %0, dims = [1, 2, 0] : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// transpose(transpose(x, p), q) -> transpose(x, p[q])
// CHECK-LABEL: func.func @transpose_compose
// CHECK-NEXT: %[[T:.*]] = stablehlo.transpose %arg0, dims = [1, 0, 2] : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<4x2x3xf32>) -> tensor<3x2x4xf32>
  return %1 : tensor<3x2x4xf32>
}

// -----

// reshape(reshape(x)) -> reshape(x); -> x when the shape comes back
// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg0 : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: return %[[R]], %arg0
func.func @reshape_chain(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<2x6xf32>) {
  %0 = stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>
  %1 = stablehlo.reshape %0 : (tensor<12xf32>) -> tensor<3x4xf32>
  %2 = stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>
  %3 = stablehlo.reshape %2 : (tensor<12xf32>) -> tensor<2x6xf32>
  return %1, %3 : tensor<3x4xf32>, tensor<2x6xf32>
}

// -----

// convert(x : T) : T -> x ; a real conversion stays
// CHECK-LABEL: func.func @convert
// CHECK-NEXT: %[[C:.*]] = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: return %arg0, %[[C]]
func.func @convert(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = stablehlo.convert %x : tensor<4xf32>
  %1 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// broadcast_in_dim to the same shape with identity dims -> x; a transposing one stays
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT: %[[B:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [1, 0]
// CHECK-NEXT: return %arg0, %[[B]]
func.func @broadcast(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = stablehlo.broadcast_in_dim %x, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<3x3xf32>, tensor<3x3xf32>
}
