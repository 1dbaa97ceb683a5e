# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of explicit sharding (sharding in types) on a (2, 4) mesh of Explicit axes: the types of
# the traced program, the arguments' and results' sdy.sharding taken from the types, reshard and bare specs.

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import ShapeDtypeStruct
from toolkit.shard import NamedSharding, PartitionSpec as P
from toolkit.testing import lowered_text, run, traced_text

mesh = toolkit.make_mesh((2, 4), ("x", "y"))


def typed(shape, spec):
    return ShapeDtypeStruct(shape, np.float32, sharding=NamedSharding(mesh, spec))


def mlp(x, w, b):
    return toolkit.nn.relu(x @ w + b).sum(axis=1)


@run
def mlp_types():
    # CHECK-LABEL: TEST: mlp_types
    # CHECK: f32[8@x,4]
    # CHECK: f32[4,8@y]
    # CHECK: [[DOT:[a-z]+]]:f32[8@x,8@y] = dot_general
    # CHECK: [[B:[a-z]+]]:f32[8,8@y] = broadcast_in_dim
    # CHECK: [[SUM:[a-z]+]]:f32[8@x,8@y] = add [[DOT]] [[B]]
    # relu is a custom_jvp (JAX's derivative at 0); its max keeps the operand's sharding:
    # CHECK: [[RELU:[a-z]+]]:f32[8@x,8@y] = custom_jvp_call
    # CHECK: :f32[8@x,8@y] = max
    # CHECK: :f32[8@x] = reduce_sum[axes=(1,)] [[RELU]]
    print(traced_text(mlp, typed((8, 4), P("x")), typed((4, 8), P(None, "y")), typed((8,), P("y"))))


@run
def mlp_lowering():
    # CHECK-LABEL: TEST: mlp_lowering
    # CHECK: mhlo.num_partitions = 8 : i32
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>})
    # CHECK-SAME: -> (tensor<8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    # Every op whose result type is explicitly sharded is constrained to its type, as JAX lowers it:
    # CHECK: %[[DOT:.*]] = stablehlo.dot_general
    # CHECK-NEXT: sdy.sharding_constraint %[[DOT]] <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    # CHECK: stablehlo.add
    # CHECK-NEXT: sdy.sharding_constraint %{{.*}} <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    # CHECK: stablehlo.reduce
    # CHECK-NEXT: %[[OUT:.*]] = sdy.sharding_constraint %{{.*}} <@mesh, [{"x"}]> : tensor<8xf32>
    # CHECK-NEXT: return %[[OUT]]
    print(lowered_text(mlp, typed((8, 4), P("x")), typed((4, 8), P(None, "y")), typed((8,), P("y"))))


@run
def reshard_in_jit():
    # CHECK-LABEL: TEST: reshard_in_jit
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK-SAME: -> (tensor<8x4xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    # CHECK: sdy.sharding_constraint %{{.*}} <@mesh, [{}, {"y"}]> : tensor<8x4xf32>
    with toolkit.set_mesh(mesh):
        print(lowered_text(lambda x: toolkit.reshard(x * 2, P(None, "y")), typed((8, 4), P("x"))))


@run
def matmul_out_sharding():
    # CHECK-LABEL: TEST: matmul_out_sharding
    # CHECK: f32[8@y,8]
    # CHECK: -> (tensor<8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    with toolkit.set_mesh(mesh):
        f = lambda a, b: tnp.matmul(a, b, out_sharding=P("y"))
        args = typed((8, 8), P(None, "y")), typed((8, 8), P("y"))
        print(traced_text(f, *args))
        print(lowered_text(f, *args))


@run
def bare_specs():
    # CHECK-LABEL: TEST: bare_specs
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK-SAME: -> (tensor<8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    with toolkit.set_mesh(mesh):
        print(lowered_text(lambda x: x + 1, ShapeDtypeStruct((8, 8), np.float32), in_shardings=P("x"),
                           out_shardings=P(None, "y")))


@run
def mixed_mesh_types_leave_the_auto_axes_open():
    # On a mesh with an Auto axis the type fixes only its Explicit axes (JAX's lower_with_sharding_in_types):
    # each typed op's constraint leaves every dimension open, unused Explicit axes replicated, and the result
    # asks for no sharding (XLA lays out the Auto part).
    # CHECK-LABEL: TEST: mixed_mesh_types_leave_the_auto_axes_open
    # CHECK: sdy.mesh @mesh = <["x"=2, "z"=2, "y"=2]>
    # CHECK: -> (tensor<8x4xf32> {jax.result_info = "result"})
    # CHECK: %[[M:.*]] = stablehlo.multiply %arg0
    # CHECK: sdy.sharding_constraint %[[M]] <@mesh, [{"x", ?}, {?}], replicated={"z"}> : tensor<8x4xf32>
    from toolkit.shard import AxisType
    mixed = toolkit.make_mesh((2, 2, 2), ("x", "z", "y"),
                              axis_types=(AxisType.Explicit, AxisType.Explicit, AxisType.Auto))
    with toolkit.set_mesh(mixed):
        print(lowered_text(lambda v: v * 2,
                           ShapeDtypeStruct((8, 4), np.float32, sharding=NamedSharding(mixed, P("x")))))
