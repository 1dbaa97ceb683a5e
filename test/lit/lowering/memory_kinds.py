# RUN: env TOOLKIT_NUM_CPU_DEVICES=8 %PYTHON %s | filecheck %s
# Golden lowering of memory kinds: jit's in/out shardings in pinned_host write mhlo.memory_kind on @main and place
# each such result with the annotate_device_placement custom call, as JAX 0.10.2 lowers them.

import numpy as np

import toolkit
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))
device = NamedSharding(mesh, P("x"))
host = device.with_memory_kind("pinned_host")


@run
def out_shardings_in_pinned_host():
    # CHECK-LABEL: TEST: out_shardings_in_pinned_host
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32> {mhlo.memory_kind = "device", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK-SAME: -> (tensor<8x4xf32> {jax.result_info = "result", mhlo.memory_kind = "pinned_host", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    # CHECK: %[[V:[0-9]+]] = stablehlo.multiply
    # CHECK-NEXT: %[[P:[0-9]+]] = stablehlo.custom_call @annotate_device_placement(%[[V]]) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    # CHECK-NEXT: return %[[P]]
    print(lowered_text(lambda x: x * 2, spec((8, 4)), in_shardings=device, out_shardings=host))


@run
def in_pinned_host_out_device():
    # CHECK-LABEL: TEST: in_pinned_host_out_device
    # CHECK: @main(%arg0: tensor<8x4xf32> {mhlo.memory_kind = "pinned_host", {{.*}}}) -> (tensor<8x4xf32> {jax.result_info = "result", mhlo.memory_kind = "device", {{.*}}})
    # CHECK: stablehlo.custom_call @annotate_device_placement({{.*}}) {{{.*}}_xla_buffer_placement = "device"}}
    print(lowered_text(lambda x: x + 1, spec((8, 4)), in_shardings=host, out_shardings=device))


@run
def some_outputs_in_host_memory():
    # As JAX: an output with no sharding is said to be in device memory, but only outputs with a sharding
    # are placed by annotate_device_placement.
    # CHECK-LABEL: TEST: some_outputs_in_host_memory
    # CHECK: -> (tensor<8x4xf32> {jax.result_info = "result[0]", mhlo.memory_kind = "pinned_host", {{.*}}}, tensor<8x4xf32> {jax.result_info = "result[1]", mhlo.memory_kind = "device"})
    # CHECK-COUNT-1: annotate_device_placement
    # CHECK-NOT: annotate_device_placement
    # CHECK: return
    print(lowered_text(lambda x: (x + 1, x * 3), spec((8, 4)), in_shardings=device, out_shardings=(host, None)))


@run
def single_device_unpinned_host():
    # CHECK-LABEL: TEST: single_device_unpinned_host
    # CHECK: mhlo.num_partitions = 1 : i32
    # CHECK: -> (tensor<3xf32> {jax.result_info = "result", mhlo.memory_kind = "unpinned_host"})
    # CHECK: _xla_buffer_placement = "unpinned_host"
    print(lowered_text(lambda x: x * 2, spec((3,)),
                       out_shardings=SingleDeviceSharding(toolkit.devices()[0], memory_kind="unpinned_host")))


@run
def default_memory_writes_nothing():
    # As JAX: when every memory kind is the device's default, no memory kind is written.
    # CHECK-LABEL: TEST: default_memory_writes_nothing
    # CHECK-NOT: memory_kind
    # CHECK-NOT: annotate_device_placement
    # CHECK: return
    print(lowered_text(lambda x: x * 2, spec((8, 4)), in_shardings=device,
                       out_shardings=device.with_memory_kind("device")))
