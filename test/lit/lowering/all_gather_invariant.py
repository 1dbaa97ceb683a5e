# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of all_gather(to="invarying") (JAX's all_gather_invariant) inside shard_map, in the form
# jax 0.10.2 emits: the same stablehlo.all_gather as the varying gather (only the type over the manual axes
# differs, so out_specs may leave the gathered axis out), and a transpose that takes this device's block of the
# cotangent with a dynamic_slice at its position along the axis (partition_id arithmetic), not a reduce_scatter.

import functools

import numpy as np

import toolkit
from toolkit import lax
from toolkit.shard import Mesh, PartitionSpec as P
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
smap = functools.partial(toolkit.shard_map, mesh=mesh)


@run
def invariant_gather():
    # CHECK-LABEL: TEST: invariant_gather
    # CHECK: sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}, {}]>]
    # CHECK: "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<4x2xf32>) -> tensor<16x2xf32>
    # untiled: a size-1 axis is inserted, then gathered; over ("y", "x") the positions are y-major
    # CHECK: stablehlo.broadcast_in_dim %arg1, dims = [0, 2] : (tensor<4x2xf32>) -> tensor<4x1x2xf32>
    # CHECK: "stablehlo.all_gather"(%{{.*}}) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 4, 1, 5, 2, 6, 3, 7]]> : tensor<1x8xi64>, use_global_device_ids}> : (tensor<4x1x2xf32>) -> tensor<4x8x2xf32>
    # CHECK: sdy.return
    def body(a):
        return (lax.all_gather(a, "y", to="invarying", tiled=True),
                lax.all_gather(a, ("y", "x"), to="invarying", axis=1))
    print(lowered_text(smap(body, in_specs=P("x", "y"), out_specs=(P("x"), P())), spec((8, 8))))


@run
def invariant_gather_transpose():
    # CHECK-LABEL: TEST: invariant_gather_transpose
    # the backward body: this device's position along "y" from partition_id, times the block size
    # CHECK: sdy.manual_computation
    # CHECK: "stablehlo.all_gather"
    # CHECK: sdy.manual_computation
    # CHECK-NOT: stablehlo.reduce_scatter
    # CHECK: stablehlo.partition_id
    # CHECK: stablehlo.dynamic_slice %{{.*}}, sizes = [4, 2] : (tensor<16x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x2xf32>
    # CHECK-NOT: stablehlo.reduce_scatter
    # CHECK: sdy.return
    def loss(a):
        def body(block):
            gathered = lax.all_gather(block, "y", to="invarying", tiled=True)
            return (gathered * gathered).sum()[None]
        return smap(body, in_specs=P("x", "y"), out_specs=P("x"))(a).sum()
    print(lowered_text(toolkit.grad(loss), spec((8, 8))))
