# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of the collectives' axis_index_groups= inside shard_map, in the form jax 0.10.2 emits:
# each mesh group (one per coordinate of the other axes) is split by the index groups, in their order
# (JAX's _replica_groups); unequal groups are padded with -1.

import functools

import numpy as np

import toolkit
from toolkit import lax
from toolkit.shard import Mesh, PartitionSpec as P
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
smap = functools.partial(toolkit.shard_map, mesh=mesh, check_vma=False)


@run
def grouped_collectives():
    # CHECK-LABEL: TEST: grouped_collectives
    # CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>]
    # psum over "y" in groups {0, 2} and {1, 3}: per row of the mesh (x = 0: devices 0-3, x = 1: devices 4-7)
    # CHECK: "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 2], [1, 3], [4, 6], [5, 7]]> : tensor<4x2xi64>, use_global_device_ids}>
    # CHECK: stablehlo.add
    # pmax in unequal groups: padded with -1
    # CHECK: "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2], [3, -1, -1], [4, 5, 6], [7, -1, -1]]> : tensor<4x3xi64>, use_global_device_ids}>
    # CHECK: stablehlo.maximum
    # all_gather over ("x", "y"): positions are row-major over the named axes, so one group of all devices splits
    # CHECK: "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 4, 5], [2, 3, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<4x2xf32>) -> tensor<16x2xf32>
    # psum_scatter keeps the order the groups list their members in
    # CHECK: "stablehlo.reduce_scatter"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}3, 1], [0, 2], [7, 5], [4, 6]]> : tensor<4x2xi64>, scatter_dimension = 1 : i64, use_global_device_ids}>
    # CHECK: (tensor<4x2xf32>) -> tensor<4x1xf32>
    # all_to_all: split_count is the group's size
    # CHECK: "stablehlo.all_to_all"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<{{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
    # groups of one device: nothing to exchange, no op (as JAX)
    # CHECK-NOT: "stablehlo.all_to_all"
    # CHECK: sdy.return
    def body(a):
        return (lax.psum(a, "y", axis_index_groups=[[0, 2], [1, 3]]),
                lax.pmax(a, "y", axis_index_groups=[[0, 1, 2], [3]]),
                lax.all_gather(a, ("x", "y"), axis_index_groups=[[0, 1, 4, 5], [2, 3, 6, 7]], tiled=True),
                lax.psum_scatter(a, "y", axis_index_groups=[[3, 1], [0, 2]], scatter_dimension=1, tiled=True),
                lax.all_to_all(a, "y", 0, 0, axis_index_groups=[[0, 1], [2, 3]], tiled=True),
                lax.all_to_all(a, "y", 0, 0, axis_index_groups=[[0], [1], [2], [3]], tiled=True))
    print(lowered_text(smap(body, in_specs=P("x", "y"), out_specs=(P("x", "y"),) * 6), spec((8, 8))))


@run
def grouped_transposes():
    # The transposes keep the groups: all_gather's is a reduce_scatter, psum's a psum, all_to_all's an all_to_all
    # with split and concat swapped.
    # CHECK-LABEL: TEST: grouped_transposes
    # CHECK: "stablehlo.all_gather"(%{{.*}}) <{all_gather_dim = 0 : i64, {{.*}} replica_groups = dense<{{\[\[}}0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>, use_global_device_ids}>
    # CHECK: "stablehlo.all_reduce"(%{{.*}}) <{{{.*}} replica_groups = dense<{{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}>
    # CHECK: "stablehlo.all_to_all"(%{{.*}}) <{{{.*}} concat_dimension = 1 : i64, replica_groups = dense<{{\[\[}}0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}>
    # CHECK: "stablehlo.all_to_all"(%{{.*}}) <{{{.*}} concat_dimension = 0 : i64, replica_groups = dense<{{\[\[}}0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}>
    # CHECK: "stablehlo.all_reduce"(%{{.*}}) <{{{.*}} replica_groups = dense<{{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}>
    # CHECK: "stablehlo.reduce_scatter"(%{{.*}}) <{{{.*}} replica_groups = dense<{{\[\[}}0, 3], [1, 2], [4, 7], [5, 6]]> : tensor<4x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}>
    def loss(a):
        groups = [[0, 3], [1, 2]]
        gathered = lax.all_gather(a, "y", axis_index_groups=groups, tiled=True)
        summed = lax.psum(a, "y", axis_index_groups=[[0, 1], [2, 3]])
        swapped = lax.all_to_all(a, "y", 0, 1, axis_index_groups=groups, tiled=True)
        return (gathered * gathered).sum() + (summed * summed).sum() + (swapped * swapped).sum()
    print(lowered_text(smap(toolkit.grad(loss), in_specs=P("x", "y"), out_specs=P("x", "y")), spec((8, 8))))
