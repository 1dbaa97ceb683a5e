// Text, bytecode and VHLO in and out; the input format is auto-detected.
// RUN: toolkit-opt %s --emit=bytecode -o %t.mlirbc
// RUN: toolkit-opt %t.mlirbc | filecheck %s
// RUN: toolkit-opt %s --emit=vhlo -o %t.vhlo
// RUN: toolkit-opt %t.vhlo | filecheck %s
// RUN: toolkit-opt %s --emit=vhlo --target-version=1.0.0 -o %t.old.vhlo
// RUN: toolkit-opt %t.old.vhlo | filecheck %s
// RUN: cat %s | toolkit-opt - | filecheck %s
// RUN: toolkit-opt %s --emit=hlo | filecheck %s --check-prefix=HLO
// RUN: toolkit-opt %s --debug-info | filecheck %s --check-prefix=LOC
// RUN: not toolkit-opt %s --emit=vhlo --target-version=99.0.0 2>&1 | filecheck %s --check-prefix=BADVERSION

// CHECK-LABEL: func.func @main
// CHECK: stablehlo.multiply %arg0, %arg1 : tensor<2x2xf32>
// HLO: HloModule
// HLO: multiply(
// LOC: loc(
// BADVERSION: toolkit-opt: error: --target-version=99.0.0: this jaxlib writes StableHLO {{.*}} .. {{.*}}
func.func @main(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
