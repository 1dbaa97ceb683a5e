// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mode=shardy mesh="x=2,y=4" in-specs="[x]" out-specs="[x]"})' | filecheck %s --check-prefix=SAME
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mode=shardy mesh="z=8" in-specs="[z]"})' | filecheck %s --check-prefix=OTHER
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mode=gspmd mesh="z=8" in-specs="[z]"})' 2>&1 | filecheck %s --check-prefix=GSPMD
// Annotating a module that holds a shard_map region (sdy.manual_computation over @mesh).

// The region's mesh is reused for an equal mesh:
// SAME:      sdy.mesh @mesh = <["x"=2, "y"=4]>
// SAME-NOT:  sdy.mesh
// SAME:      func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// SAME-SAME: -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// SAME:      sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>]

// Another mesh takes the next free name:
// OTHER:      sdy.mesh @mesh = <["x"=2, "y"=4]>
// OTHER-NEXT: sdy.mesh @mesh_0 = <["z"=8]>
// OTHER:      func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_0, [{"z"}, {}]>})

// GSPMD form cannot describe the region:
// GSPMD: annotate_manual.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the module has an sdy.manual_computation (at {{.*}}), which only the Shardy partitioner runs; annotate it with mode=shardy
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x2xf32>) {
      %1 = stablehlo.multiply %arg1, %arg1 : tensor<4x2xf32>
      sdy.return %1 : tensor<4x2xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
