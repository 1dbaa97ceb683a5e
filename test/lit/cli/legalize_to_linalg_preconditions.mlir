// stablehlo-legalize-to-linalg aborts ("LLVM ERROR: could not reify") on a width-changing
// bitcast_convert into a dynamic shape; toolkit refuses it first (toolkit/passes/preconditions.py).
// A static result is converted as usual.
// RUN: not toolkit-opt %s -split-input-file --pass-pipeline='builtin.module(stablehlo-legalize-to-linalg)' 2>&1 | filecheck %s

// CHECK: error: pass 'stablehlo-legalize-to-linalg' cannot run on this module: a stablehlo.bitcast_convert at {{.*}} changes the element width (tensor<4xf32> -> tensor<?x?xi8>) into a dynamic shape; refine its shape first
func.func @dynamic(%arg0: tensor<4xf32>) -> tensor<?x?xi8> {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<?x?xi8>
  func.return %0 : tensor<?x?xi8>
}

// -----
// CHECK-LABEL: func.func @static
// CHECK-NOT: stablehlo.bitcast_convert
func.func @static(%arg0: tensor<4xf32>) -> tensor<4x4xi8> {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4x4xi8>
  func.return %0 : tensor<4x4xi8>
}
