// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-sharding-report)' -o /dev/null 2>&1 | filecheck %s

// CHECK: value {{ +}}type {{ +}}sharding {{ +}}shard shape  devices
// CHECK: @main arg 0 {{ +}}tensor<8x8xf32> {{ +}}{devices=[2,1,4]<=[8] last_tile_dim_replicate} {{ +}}4x8 {{ +}}8
// CHECK: @main arg 1 {{ +}}tensor<8x16xf32> {{ +}}#sdy.sharding<@mesh, [{}, {"x", "y"}]> {{ +}}8x2 {{ +}}8
// CHECK: @main %0 constraint {{ +}}tensor<8x16xf32> {{ +}}{devices=[1,8]<=[8]} {{ +}}8x2 {{ +}}8
// CHECK: @main %1 constraint {{ +}}tensor<8x16xf32> {{ +}}#sdy.sharding<@mesh, [{"y"}, {}]> {{ +}}2x16 {{ +}}8
// CHECK: @main result 0 {{ +}}tensor<8x16xf32> {{ +}}{replicated} {{ +}}8x16 {{ +}}all
module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"},
                         %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>})
      -> (tensor<8x16xf32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg1) {mhlo.sharding = "{devices=[1,8]<=[8]}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {}]> : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}
