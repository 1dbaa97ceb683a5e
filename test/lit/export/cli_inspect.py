# RUN: %PYTHON %s %t.v9 %t.v10
# RUN: %PYTHON -m toolkit.tools.export_cli export inspect %t.v10 | filecheck %s --check-prefix=INSPECT
# RUN: not %PYTHON -m toolkit.tools.export_cli export diff %t.v9 %t.v10 | filecheck %s --check-prefix=DIFF
# RUN: %PYTHON -m toolkit.tools.export_cli export mlir %t.v10 | filecheck %s --check-prefix=MLIR

# The same function exported under calling conventions 9 and 10, then inspected.
import sys

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit.export import export

f = toolkit.jit(lambda x, y: tnp.tanh(x) + y)
spec = np.ones((2, 3), np.float32)
for path, version in zip(sys.argv[1:], (9, 10)):
    with open(path, "wb") as out:
        out.write(export(f, calling_convention_version=version, platforms=("cpu", "cuda"))(spec, spec).serialize())

# INSPECT: fun_name: <lambda>
# INSPECT: serialization_version: 3 (stored)
# INSPECT: calling_convention_version: 10
# INSPECT: platforms: cpu, cuda
# INSPECT: args[0]: f32[2,3]  sharding: unspecified
# INSPECT: uses_global_constants: true
# INSPECT: main signature:
# INSPECT-NEXT: @main(
# INSPECT-NEXT: %arg0: tensor<i32> (platform_index, '_platform_index')
# INSPECT-NEXT: %arg1: tensor<2x3xf32> (array)
# INSPECT-NEXT: %arg2: tensor<2x3xf32> (array)

# DIFF: ! calling_convention_version:
# DIFF-NEXT: A: 9:
# DIFF-NEXT: B: 10:
# DIFF: main signature:
# DIFF-NEXT: = identical
# DIFF: module text:
# DIFF-NEXT: = identical
# DIFF: 1 difference(s)

# MLIR: module @jit__lambda_ attributes {jax.uses_shape_polymorphism = true
# MLIR: func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}
# MLIR: stablehlo.tanh %arg1
