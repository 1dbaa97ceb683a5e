# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 TOOLKIT_PARTITIONER=gspmd %PYTHON %s | filecheck %s
# Golden lowering of sharding: with_sharding_constraint and jit's in/out shardings (GSPMD form).

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
    # CHECK: stablehlo.custom_call @Sharding(%{{.*}}) {mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    print(lowered_text(lambda x: lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x", "y"))),
                       spec((8, 8))))


@run
def jit_shardings():
    # CHECK-LABEL: TEST: jit_shardings
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"})
    # CHECK-SAME: -> (tensor<8x8xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"})
    print(lowered_text(lambda x: x + 1, spec((8, 8)), in_shardings=NamedSharding(mesh, P("x")),
                       out_shardings=NamedSharding(mesh, P(None, "y"))))


@run
def device_put_inside_jit():
    # As JAX's: a traced device_put lowers to nothing; its sharding's devices are the computation's.
    # CHECK-LABEL: TEST: device_put_inside_jit
    # CHECK: mhlo.num_partitions = 8 : i32
    # CHECK: %[[X:.*]] = stablehlo.multiply %arg0
    # CHECK-NEXT: return %[[X]] : tensor<8x8xf32>
    print(lowered_text(lambda x: toolkit.device_put(x * 2, NamedSharding(mesh, P("x", "y"))), spec((8, 8))))


@run
def device_put_to_a_device_inside_jit():
    # A device does not place the computation (JAX's neither): one partition, nothing in the module.
    # CHECK-LABEL: TEST: device_put_to_a_device_inside_jit
    # CHECK: mhlo.num_partitions = 1 : i32
    # CHECK: %[[X:.*]] = stablehlo.multiply %arg0
    # CHECK-NEXT: return %[[X]] : tensor<8x8xf32>
    print(lowered_text(lambda x: toolkit.device_put(x * 2, toolkit.devices()[3]), spec((8, 8))))
