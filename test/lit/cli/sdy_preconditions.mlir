// Shardy's propagation aborts (CHECK) or segfaults on these modules; toolkit
// refuses them before it runs (toolkit/passes/preconditions.py): exit 1, one line each.
// RUN: not toolkit-opt %s -split-input-file --pass-pipeline='builtin.module(sdy-propagation-pipeline)' 2>&1 | filecheck %s
// RUN: not toolkit-opt %s -split-input-file --pass-pipeline='builtin.module(stablehlo-legalize-to-vhlo, sdy-propagation-pipeline)' 2>&1 | filecheck %s --check-prefix=VHLO
// The other sdy passes segfault only on a call to a declaration:
// RUN: not toolkit-opt %s -split-input-file --pass-pipeline='builtin.module(sdy-lift-inlined-meshes, sdy-close-shardings)' -o %t 2>&1 | filecheck %s --check-prefix=OTHER
// RUN: not toolkit-opt %s -split-input-file --pass-pipeline='builtin.module(sdy-close-shardings)' -o %t 2>&1 | filecheck %s --check-prefix=OTHER2

// OTHER: error: pass 'sdy-lift-inlined-meshes' cannot run on this module: @main calls @ext, a declaration without a body
// OTHER2: error: pass 'sdy-close-shardings' cannot run on this module: @main calls @ext, a declaration without a body

// VHLO: error: pass 'sdy-propagation-pipeline' cannot run on this module: it has no public func.func
// VHLO-COUNT-5: error: pass 'sdy-propagation-pipeline' cannot run on this module: it holds VHLO ops (vhlo.func_v1); convert them back with vhlo-legalize-to-stablehlo first

// CHECK: sdy_preconditions.mlir: error: pass 'sdy-propagation-pipeline' cannot run on this module: it has no public func.func (Shardy needs a public func.func @main)
module {
}

// -----
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: its func.call graph is recursive (@callee -> @callee)
func.func @main() -> tensor<i32> {
  %0 = stablehlo.constant dense<3> : tensor<i32>
  %1 = call @callee(%0) : (tensor<i32>) -> tensor<i32>
  return %1 : tensor<i32>
}
func.func private @callee(%arg0: tensor<i32>) -> tensor<i32> {
  %0 = call @callee(%arg0) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: its func.call graph is recursive (@a -> @b -> @a)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @a(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @a(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @b(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @b(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @a(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: @main calls @ext, a declaration without a body
func.func private @ext(%x: tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @ext(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: its func.func @main is not public
func.func private @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: it has 2 functions and none is a public @main
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----
// One public function beside a private one: Shardy still looks up @main (standing fuzz run, seed 7).
// CHECK: error: pass 'sdy-propagation-pipeline' cannot run on this module: it has 2 functions and none is a public @main
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
