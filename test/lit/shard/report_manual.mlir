// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-sharding-report)' -o /dev/null 2>&1 | filecheck %s
// The report at a shard_map region: every operand and result of sdy.manual_computation with its manual axes and
// the per-device shape its body sees; then the same program in GSPMD form (@SPMDFullToShardShape/ShardToFullShape).

// CHECK:      value {{ +}}type {{ +}}sharding {{ +}}shard shape {{ +}}devices
// CHECK:      @main %0 manual in 0 {{ +}}tensor<8x8xf32> {{ +}}<@mesh, [{"x"}, {"y"}]> manual_axes={"x", "y"} {{ +}}4x2 {{ +}}8
// CHECK-NEXT: @main %0 manual in 1 {{ +}}tensor<8xf32> {{ +}}<@mesh, [{"y"}]> manual_axes={"x", "y"} {{ +}}2 {{ +}}8
// CHECK-NEXT: @main %0 manual out 0 {{ +}}tensor<8x2xf32> {{ +}}<@mesh, [{"x"}, {}]> manual_axes={"x", "y"} {{ +}}4x2 {{ +}}8
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> (tensor<8x2xf32>) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg2: tensor<4x2xf32>, %arg3: tensor<2xf32>) {
      %1 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
      %2 = stablehlo.multiply %arg2, %1 : tensor<4x2xf32>
      %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %4 = stablehlo.add %arg4, %arg5 : tensor<f32>
        stablehlo.return %4 : tensor<f32>
      }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
      sdy.return %3 : tensor<4x2xf32>
    } : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}

// -----

// CHECK:      @gspmd %0 constraint {{ +}}tensor<8x8xf32> {{ +}}{devices=[2,4]<=[8]} {{ +}}4x2 {{ +}}8
// CHECK-NEXT: @gspmd %1 manual in {{ +}}tensor<8x8xf32> -> tensor<4x2xf32> {{ +}}{manual} {{ +}}4x2 {{ +}}manual
// CHECK-NEXT: @gspmd %2 constraint {{ +}}tensor<4x2xf32> {{ +}}{manual} {{ +}}4x2 {{ +}}manual
// CHECK-NEXT: @gspmd %3 manual out {{ +}}tensor<8x2xf32> -> tensor<4x2xf32> {{ +}}{devices=[2,1,4]<=[8] last_tile_dim_replicate} {{ +}}4x2 {{ +}}8
module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @gspmd(%arg0: tensor<8x8xf32>) -> tensor<8x2xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8x8xf32>) -> tensor<4x2xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<4x2xf32>) -> tensor<8x2xf32>
    return %3 : tensor<8x2xf32>
  }
}
