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


@run
def device_put_to_host_memory_inside_jit():
    # As JAX 0.10.2 on CPU: the put lowers to nothing, and the results made from the value are said to be in host
    # memory on @main (mhlo.memory_kind; unplaced, no annotate_device_placement); a result not made from it is in
    # device memory, and a put to toolkit.memory.Space.Host is one to pinned_host.
    # CHECK-LABEL: TEST: device_put_to_host_memory_inside_jit
    # CHECK: mhlo.num_partitions = 1 : i32
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32>)
    # CHECK-SAME: -> (tensor<8x8xf32> {jax.result_info = "result[0]", mhlo.memory_kind = "pinned_host"}, tensor<8x8xf32> {jax.result_info = "result[1]", mhlo.memory_kind = "device"}, tensor<f32> {jax.result_info = "result[2]", mhlo.memory_kind = "pinned_host"})
    # CHECK-NOT: custom_call
    # CHECK: return
    host = toolkit.shard.SingleDeviceSharding(toolkit.devices()[0], memory_kind="pinned_host")
    print(lowered_text(lambda x: (toolkit.device_put(x * 2, host) + 1, x - 1,
                                  toolkit.device_put(x, toolkit.memory.Space.Host).sum()), spec((8, 8))))
