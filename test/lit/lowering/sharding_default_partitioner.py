# RUN: env -u TOOLKIT_PARTITIONER TOOLKIT_NUM_CPU_DEVICES=8 %PYTHON %s | filecheck %s
# RUN: env TOOLKIT_PARTITIONER=gspmd TOOLKIT_NUM_CPU_DEVICES=8 %PYTHON %s | filecheck %s --check-prefix=GSPMD
# Golden: with TOOLKIT_PARTITIONER unset, a sharded jit lowers in Shardy form (JAX 0.10's default);
# TOOLKIT_PARTITIONER=gspmd gives GSPMD's mhlo.sharding strings.

import numpy as np

import toolkit
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P
from toolkit.testing import lowered_text, run, spec

mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ("x", "y"))


@run
def default_partitioner():
    # CHECK-LABEL: TEST: default_partitioner
    # CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
    # CHECK: func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    # CHECK-NOT: mhlo.sharding
    # GSPMD-LABEL: TEST: default_partitioner
    # GSPMD-NOT: sdy.
    # GSPMD: func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"})
    print(lowered_text(lambda x: x * 2, spec((8, 8)), in_shardings=NamedSharding(mesh, P("x", "y"))))
