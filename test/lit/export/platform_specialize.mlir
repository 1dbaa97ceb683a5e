// RUN: toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=cuda platforms=cpu,cuda,rocm})' %s 2>%t.err | filecheck %s
// RUN: filecheck --check-prefix=REPORT %s < %t.err
// RUN: toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=cpu platforms=cpu,cuda,rocm quiet=true})' %s | filecheck --check-prefix=CPU %s
// RUN: toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=rocm index=2 quiet=true})' %s | filecheck --check-prefix=ROCM %s
// RUN: not toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=tpu platforms=cpu,cuda})' %s 2>&1 | filecheck --check-prefix=ERR %s

// A module as a 3-platform export lowers it: cpu adds, cuda and rocm multiply.
// The index is first mapped to a branch number (cpu->0, cuda->1, rocm->1).

// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %arg0: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"})
// CHECK-NOT: _platform_index
// CHECK-NOT: stablehlo.case
// CHECK: %[[S:.*]] = stablehlo.sine %arg0
// CHECK-NOT: stablehlo.add
// CHECK: %[[M:.*]] = stablehlo.multiply %[[S]], %[[S]]
// CHECK: return %[[M]]

// REPORT: toolkit-platform-specialize: platform 'cuda' (index 1): kept branch 1 of 3
// REPORT: toolkit-platform-specialize: platform 'cuda' (index 1): kept branch 1 of 2

// CPU-LABEL: func.func public @main(
// CPU-NOT: stablehlo.case
// CPU: stablehlo.add
// CPU-NOT: stablehlo.multiply

// ROCM-LABEL: func.func public @main(
// ROCM-NOT: stablehlo.case
// ROCM: stablehlo.multiply

// ERR: platform 'tpu' is not among the module's platforms ('cpu', 'cuda')

module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg1 : tensor<4xf32>
    %1 = "stablehlo.case"(%arg0) ({
      %c = stablehlo.constant dense<0> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }, {
      %c = stablehlo.constant dense<1> : tensor<i32>
      stablehlo.return %c : tensor<i32>
    }) : (tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      %3 = stablehlo.add %0, %0 : tensor<4xf32>
      stablehlo.return %3 : tensor<4xf32>
    }, {
      %3 = stablehlo.multiply %0, %0 : tensor<4xf32>
      stablehlo.return %3 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
