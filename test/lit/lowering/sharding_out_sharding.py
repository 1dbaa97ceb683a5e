# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of out_sharding= (explicit sharding, a (2, 4) mesh of Explicit axes): a reshape JAX's rules
# cannot infer, the creation functions and iota, einsum of two operands (the product typed before the final
# transpose) and of three (contracted with the axes Auto, then resharded). As in JAX, the primitive making the
# result is typed by out_sharding and constrained to it in the module.

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import ShapeDtypeStruct, lax
from toolkit.shard import NamedSharding, PartitionSpec as P
from toolkit.testing import lowered_text, run, traced_text

mesh = toolkit.make_mesh((2, 4), ("x", "y"))


def typed(shape, spec):
    return ShapeDtypeStruct(shape, np.float32, sharding=NamedSharding(mesh, spec))


@run
def reshape_merge():
    # CHECK-LABEL: TEST: reshape_merge
    # CHECK: { lambda ; a:f32[8,4@y]. let
    # CHECK-NEXT: b:f32[32@x] = reshape[new_sizes=(32,)] a
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    # CHECK-SAME: -> (tensor<32xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    # CHECK-NEXT: %[[R:.*]] = stablehlo.reshape %arg0 : (tensor<8x4xf32>) -> tensor<32xf32>
    # CHECK-NEXT: %[[C:.*]] = sdy.sharding_constraint %[[R]] <@mesh, [{"x"}]> : tensor<32xf32>
    # CHECK-NEXT: return %[[C]]
    with toolkit.set_mesh(mesh):
        def f(y):
            return lax.reshape(y, (32,), out_sharding=P("x"))
        print(traced_text(f, typed((8, 4), P(None, "y"))))
        print(lowered_text(f, typed((8, 4), P(None, "y"))))


@run
def creation():
    # CHECK-LABEL: TEST: creation
    # CHECK: b:f32[8@x,4] = broadcast_in_dim[shape=(8, 4) broadcast_dimensions=()] a
    # CHECK-NEXT: c:i32[16@(x,y)] = iota[dtype=int32 shape=(16,) dimension=0]
    # CHECK-NEXT: d:i32[8,4@y] = iota[dtype=int32 shape=(8, 4) dimension=1]
    # CHECK: func.func public @main()
    # CHECK-SAME: -> (tensor<8x4xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<16xi32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}, tensor<8x4xi32> {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    # CHECK: %[[Z:.*]] = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4xf32>
    # CHECK-NEXT: sdy.sharding_constraint %[[Z]] <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
    # CHECK-NEXT: %[[A:.*]] = stablehlo.iota dim = 0 : tensor<16xi32>
    # CHECK-NEXT: sdy.sharding_constraint %[[A]] <@mesh, [{"x", "y"}]> : tensor<16xi32>
    # CHECK-NEXT: %[[I:.*]] = stablehlo.iota dim = 1 : tensor<8x4xi32>
    # CHECK-NEXT: sdy.sharding_constraint %[[I]] <@mesh, [{}, {"y"}]> : tensor<8x4xi32>
    with toolkit.set_mesh(mesh):
        def g():
            return (tnp.zeros((8, 4), out_sharding=P("x")), tnp.arange(16, out_sharding=P(("x", "y"))),
                    lax.broadcasted_iota(np.int32, (8, 4), 1, out_sharding=P(None, "y")))
        print(traced_text(g))
        print(lowered_text(g))


@run
def einsum_two_operands():
    # CHECK-LABEL: TEST: einsum_two_operands
    # As JAX's: the right operand first, which gives the output's order ("ki") without a transpose.
    # CHECK: { lambda ; a:f32[8,8@y] b:f32[8@y,8]. let
    # CHECK-NEXT: c:f32[8@x,8] = dot_general[dimension_numbers=(((0,), (1,)), ((), ()))
    # CHECK-SAME: ] b a
    # CHECK-NEXT: in (c,) }
    # CHECK: %[[D:.*]] = stablehlo.dot_general %arg1, %arg0, contracting_dims = [0] x [1]
    # CHECK-NEXT: %[[OUT:.*]] = sdy.sharding_constraint %[[D]] <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    # CHECK-NEXT: return %[[OUT]]
    with toolkit.set_mesh(mesh):
        def f(a, b):
            return tnp.einsum("ij,jk->ki", a, b, out_sharding=P("x"))
        args = typed((8, 8), P(None, "y")), typed((8, 8), P("y"))
        print(traced_text(f, *args))
        print(lowered_text(f, *args))


@run
def einsum_three_operands():
    # CHECK-LABEL: TEST: einsum_three_operands
    # CHECK: { lambda ; a:f32[8,8@y] b:f32[8@y,8] c:f32[8,8@y]. let
    # In JAX's contraction order (the path opt_einsum gives), which needs no transpose here.
    # CHECK: g:f32[8,8] = dot_general{{.*}} e d
    # CHECK-NEXT: h:f32[8,8] = dot_general{{.*}} g f
    # CHECK-NEXT: i:f32[8@y,8] = sharding_constraint
    # CHECK: -> (tensor<8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    with toolkit.set_mesh(mesh):
        def f(a, b, c):
            return tnp.einsum("ij,jk,kl->il", a, b, c, out_sharding=P("y"))
        args = typed((8, 8), P(None, "y")), typed((8, 8), P("y")), typed((8, 8), P(None, "y"))
        print(traced_text(f, *args))
        print(lowered_text(f, *args))
