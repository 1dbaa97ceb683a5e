# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of the sharding rules of gather, scatter, conv_general_dilated, top_k and scan's stacked outputs
# on a (2, 4) mesh of Explicit axes: the traced types the rules give, and the sdy.sharding_constraint to its type
# that follows every op whose result is explicitly sharded.

import numpy as np

import toolkit
from toolkit import ShapeDtypeStruct, lax
from toolkit.shard import NamedSharding, PartitionSpec as P
from toolkit.testing import lowered_text, run, traced_text

mesh = toolkit.make_mesh((2, 4), ("x", "y"))


def typed(shape, spec, dtype=np.float32):
    return ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))


def show(fun, *args):
    print(traced_text(fun, *args))
    print(lowered_text(fun, *args))


@run
def gather_rows():
    # x[i] on f32[8,4@y]: the offset dimension keeps the operand's spec.
    # CHECK-LABEL: TEST: gather_rows
    # CHECK: i:f32[3,4@y] = gather
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
    # CHECK-SAME: -> (tensor<3x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    # CHECK: %[[G:.*]] = "stablehlo.gather"
    # CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[G]] <@mesh, [{}, {"y"}]> : tensor<3x4xf32>
    # CHECK-NEXT: return %[[C]]
    show(lambda x, i: x[i], typed((8, 4), P(None, "y")), ShapeDtypeStruct((3,), np.int32))


@run
def scatter_add_rows():
    # x.at[i].add(u): the window dimension is sharded alike in operand and updates.
    # CHECK-LABEL: TEST: scatter_add_rows
    # CHECK: j:f32[8,4@y] = scatter_add
    # CHECK: -> (tensor<8x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    # CHECK: %[[S:.*]] = "stablehlo.scatter"
    # CHECK: stablehlo.add
    # CHECK: }) : (tensor<8x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<8x4xf32>
    # CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[S]] <@mesh, [{}, {"y"}]> : tensor<8x4xf32>
    # CHECK-NEXT: return %[[C]]
    show(lambda x, i, u: x.at[i].add(u), typed((8, 4), P(None, "y")), ShapeDtypeStruct((2,), np.int32),
         typed((2, 4), P(None, "y")))


@run
def conv_batch_sharded():
    # NHWC conv with the batch dimension over x and a replicated kernel: the output batch dimension over x.
    # CHECK-LABEL: TEST: conv_batch_sharded
    # CHECK: c:f32[2@x,8,8,8] = conv_general_dilated
    # CHECK: -> (tensor<2x8x8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>})
    # CHECK: %[[V:.*]] = stablehlo.convolution
    # CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[V]] <@mesh, [{"x"}, {}, {}, {}]> : tensor<2x8x8x8xf32>
    # CHECK-NEXT: return %[[C]]
    show(lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         typed((2, 8, 8, 4), P("x")), ShapeDtypeStruct((3, 3, 4, 8), np.float32))


@run
def top_k_rows():
    # top_k along the unsharded last axis: values and indices keep the operand's spec.
    # CHECK-LABEL: TEST: top_k_rows
    # CHECK: b:f32[8@x,2] c:i32[8@x,2] = top_k[k=2] a
    # CHECK: %values, %indices = chlo.top_k(%arg0, k = 2)
    # CHECK-NEXT: %[[V:.*]] = sdy.sharding_constraint %values <@mesh, [{"x"}, {}]> : tensor<8x2xf32>
    # CHECK-NEXT: %[[I:.*]] = sdy.sharding_constraint %indices <@mesh, [{"x"}, {}]> : tensor<8x2xi32>
    # CHECK-NEXT: return %[[V]], %[[I]]
    show(lambda x: lax.top_k(x, 2), typed((8, 4), P("x")))


@run
def scan_stacked_outputs():
    # The stacked ys: the body's per-iteration type with an unsharded leading (length) dimension.
    # CHECK-LABEL: TEST: scan_stacked_outputs
    # CHECK: b:f32[8@x,4@y] c:f32[3,8@x,4@y] = scan
    # CHECK: -> (tensor<8x4xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<3x8x4xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {"y"}]>})
    # CHECK: %[[W:.*]]:3 = stablehlo.while
    # CHECK: stablehlo.multiply
    # CHECK-NEXT: sdy.sharding_constraint %{{.*}} <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
    # CHECK: stablehlo.dynamic_update_slice
    # CHECK: %[[C:.*]] = sdy.sharding_constraint %[[W]]#1 <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
    # CHECK-NEXT: %[[Y:.*]] = sdy.sharding_constraint %[[W]]#2 <@mesh, [{}, {"x"}, {"y"}]> : tensor<3x8x4xf32>
    # CHECK-NEXT: return %[[C]], %[[Y]]
    show(lambda c: lax.scan(lambda c, _: (c * 2, c + 1), c, None, length=3), typed((8, 4), P("x", "y")))
