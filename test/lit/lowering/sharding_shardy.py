# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=shardy %PYTHON %s | filecheck %s
# Golden lowering of sharding in Shardy form: with_sharding_constraint and jit's in/out shardings.

import numpy as np

import toolkit
from toolkit import lax
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))


@run
def sharding_constraint():
    # CHECK-LABEL: TEST: sharding_constraint
    # CHECK: mhlo.num_partitions = 8 : i32
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    # CHECK: sdy.sharding_constraint %{{.*}} <@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
    # CHECK-NOT: mhlo.sharding
    print(lowered_text(lambda x: lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x", "y"))),
                       spec((8, 8))))


@run
def jit_shardings():
    # CHECK-LABEL: TEST: jit_shardings
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK-SAME: -> (tensor<8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    print(lowered_text(lambda x: x + 1, spec((8, 8)), in_shardings=NamedSharding(mesh, P("x")),
                       out_shardings=NamedSharding(mesh, P(None, "y"))))


@run
def two_meshes():
    # One sdy.mesh symbol per mesh, named as JAX 0.10 names them: @main's first, then the constraint's.
    # CHECK-LABEL: TEST: two_meshes
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK-NEXT: sdy.mesh @mesh_0 = <["z"=8]>
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK: sdy.sharding_constraint %arg0 <@mesh_0, [{"z"}, {}]> : tensor<8x8xf32>
    flat = Mesh(np.array(toolkit.devices()), ("z",))
    print(lowered_text(lambda x: lax.with_sharding_constraint(x, NamedSharding(flat, P("z"))), spec((8, 8)),
                       in_shardings=NamedSharding(mesh, P("x"))))
