# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=gspmd %PYTHON %s | filecheck %s --check-prefix=GSPMD
# Golden lowering of shard_map (sdy.manual_computation; under gspmd SPMDFullToShardShape/ShardToFullShape)
# and of its collectives, in the form jax 0.10.2 emits.

import functools
import os

import numpy as np

import toolkit
from toolkit import lax
from toolkit.shard import Mesh, PartitionSpec as P
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
smap = functools.partial(toolkit.shard_map, mesh=mesh)


@run
def manual_computation():
    # CHECK-LABEL: TEST: manual_computation
    # CHECK: mhlo.num_partitions = 8 : i32
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK: %[[R:.*]] = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<4x2xf32>) {
    # CHECK: "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}>
    # CHECK: stablehlo.add
    # CHECK: sdy.return %{{.*}} : tensor<4x2xf32>
    # CHECK: } : (tensor<8x8xf32>) -> tensor<8x2xf32>
    # CHECK: return %[[R]] : tensor<8x2xf32>
    # GSPMD-LABEL: TEST: manual_computation
    # GSPMD: stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    # GSPMD: stablehlo.custom_call @SPMDFullToShardShape(%{{.*}}) {mhlo.sharding = "{manual}"} : (tensor<8x8xf32>) -> tensor<4x2xf32>
    # GSPMD: "stablehlo.all_reduce"
    # GSPMD: stablehlo.custom_call @Sharding(%{{.*}}) {mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    # GSPMD: stablehlo.custom_call @SPMDShardToFullShape(%{{.*}}) {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<4x2xf32>) -> tensor<8x2xf32>
    # GSPMD-NOT: sdy.manual_computation
    print(lowered_text(smap(lambda a: lax.psum(a, "y"), in_specs=P("x", "y"), out_specs=P("x")), spec((8, 8))))


@run
def collectives():
    # CHECK-LABEL: TEST: collectives
    # CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>]
    # CHECK-SAME: manual_axes={"x", "y"} (%arg1: tensor<4x2xf32>)
    # all_gather over x, tiled along dimension 0
    # CHECK: "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<4x2xf32>) -> tensor<8x2xf32>
    # psum_scatter over x back to the block
    # CHECK: "stablehlo.reduce_scatter"(%{{.*}}) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}>
    # CHECK: (tensor<8x2xf32>) -> tensor<4x2xf32>
    # a ring over y
    # CHECK: "stablehlo.collective_permute"(%{{.*}}) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}>
    # all_to_all over y: no use_global_device_ids, as JAX
    # CHECK: "stablehlo.all_to_all"(%{{.*}}) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 1 : i64, replica_groups = dense<{{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, split_count = 4 : i64, split_dimension = 0 : i64}> : (tensor<4x2xf32>) -> tensor<1x8xf32>
    # untiled all_gather over both axes inserts the new axis first
    # CHECK: stablehlo.broadcast_in_dim %arg1, dims = [0, 2] : (tensor<4x2xf32>) -> tensor<4x1x2xf32>
    # CHECK: "stablehlo.all_gather"(%{{.*}}) <{all_gather_dim = 1 : i64, {{.*}} replica_groups = dense<{{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> : (tensor<4x1x2xf32>) -> tensor<4x8x2xf32>
    # pmax over both axes
    # CHECK: "stablehlo.all_reduce"(%arg1) {{.*}} replica_groups = dense<{{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}>
    # CHECK: stablehlo.maximum
    # axis_index(("x", "y")): partition_id / stride % size per axis, minor axis first
    # CHECK: %[[S:.*]] = stablehlo.constant dense<1> : tensor<ui32>
    # CHECK: %[[N:.*]] = stablehlo.constant dense<4> : tensor<ui32>
    # CHECK: %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
    # CHECK: %[[D:.*]] = stablehlo.divide %[[PID]], %[[S]] : tensor<ui32>
    # CHECK: stablehlo.remainder %[[D]], %[[N]] : tensor<ui32>
    # CHECK: stablehlo.partition_id : tensor<ui32>
    # CHECK: sdy.return
    def body(a):
        b = lax.all_gather(a, "x", axis=0, tiled=True)
        c = lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True)
        d = lax.ppermute(c, "y", [(i, (i + 1) % 4) for i in range(4)])
        e = lax.all_to_all(d, "y", 0, 1, tiled=True)
        h = lax.all_gather(a, ("x", "y"), axis=1, tiled=False)
        return b, d, e, lax.pmax(a, ("x", "y")) + lax.axis_index(("x", "y")).astype(a.dtype), h
    print(lowered_text(smap(body, in_specs=P("x", "y"), out_specs=(P("x", "y"),) * 4 + (P("x", "y", None),)),
                       spec((8, 8))))


@run
def replicated_input_and_closure():
    # CHECK-LABEL: TEST: replicated_input_and_closure
    # A replicated argument and a closed-over value get [{}, ...] shardings; the block argument is whole.
    # CHECK: sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}]>, <@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x", "y"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>)
    def f(x, w):
        return smap(lambda a: lax.psum(a * w, "x"), in_specs=P("x"), out_specs=P())(x)
    print(lowered_text(f, spec((8,)), spec((4,))))


@run
def partially_manual():
    # Only "x" is manual: the other axes stay open ({..., ?}) for the partitioner, and axis_index is
    # computed in a nested manual_computation over the rest, as JAX does (refused under gspmd).
    # CHECK-LABEL: TEST: partially_manual
    # CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>, <@mesh, [{"x", ?}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>)
    # CHECK: replica_groups = dense<{{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>
    # CHECK: sdy.manual_computation() in_shardings=[] out_shardings=[<@mesh, []>] manual_axes={"y"} () {
    # CHECK: stablehlo.partition_id
    # CHECK: sdy.return %{{.*}} : tensor<i32>
    # CHECK: } : () -> tensor<i32>
    if os.environ.get("TOOLKIT_PARTITIONER") == "gspmd":
        return
    f = smap(lambda a: (lax.psum(a, "x"), lax.axis_index("x").reshape(1)), in_specs=P("x"), out_specs=(P(), P("x")),
             axis_names={"x"})
    print(lowered_text(f, spec((8, 8))))
