// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-annotate{mode=gspmd mesh="x=2,y=4" in-specs="[x];[None,y]" out-specs="[x,y]"})' | filecheck %s

// CHECK: module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}
// CHECK-NOT: sdy.mesh
// CHECK-LABEL: func.func public @main
// CHECK-SAME: %arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}
// CHECK-SAME: %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}
// CHECK-SAME: -> (tensor<8x8xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[2,4]<=[8]}"})
func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {jax.result_info = "result"}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
