# RUN: %PYTHON %s %t.poly %t.topk
# RUN: %PYTHON -m toolkit.tools.export_cli export run %t.poly --arg "[[0, 0, 0], [1, 1, 1]]" --arg "[[1, 1, 1], [1, 1, 1]]" | filecheck %s --check-prefix=OUT
# RUN: not %PYTHON -m toolkit.tools.export_cli export run %t.poly --arg "[[0, 0, 0]]" --arg 1.5 2>&1 | filecheck %s --check-prefix=BADARG
# RUN: not %PYTHON -m toolkit.tools.export_cli export check-compat %t.poly --consumer cc=9,stablehlo=1.8.0 | filecheck %s --check-prefix=COMPAT
# RUN: not %PYTHON -m toolkit.tools.export_cli export check-compat %t.topk --consumer stablehlo=0.15.0 | filecheck %s --check-prefix=BLOCKED
# RUN: not %PYTHON -m toolkit.tools.export_cli export convert %t.topk --stablehlo-target 0.15.0 -o %t.old 2>&1 | filecheck %s --check-prefix=REFUSED
# RUN: %PYTHON -m toolkit.tools.export_cli export convert %t.poly --calling-convention 8 -o %t.v8
# RUN: %PYTHON -m toolkit.tools.export_cli export inspect %t.v8 --json | filecheck %s --check-prefix=JSON
# RUN: %PYTHON -m toolkit.tools.export_cli export convert %t.poly --static b=2 --plain --emit=text | filecheck %s --check-prefix=PLAIN
# RUN: %PYTHON -m toolkit.tools.export_cli export convert %t.poly --static b=2 --plain -o %t.vhlo
# RUN: toolkit-run %t.vhlo -arg "[[0, 0, 0], [1, 1, 1]]" -arg 1 | filecheck %s --check-prefix=OUT

# A polymorphic two-platform export and one with a composite (top_k), converted, checked and run.
import sys

import numpy as np

import toolkit
from toolkit import lax
from toolkit.core.shape_poly import symbolic_shape
from toolkit.export import export

b, = symbolic_shape("b")
spec = toolkit.ShapeDtypeStruct((b, 3), np.float32)
poly = export(toolkit.jit(lambda x, y: toolkit.numpy.tanh(x) * 2 + y), platforms=("cpu", "cuda"))(spec, spec)
topk = export(toolkit.jit(lambda x: lax.top_k(x, 2)[0]))(toolkit.ShapeDtypeStruct((4,), np.float32))
for path, exp in zip(sys.argv[1:], (poly, topk)):
    with open(path, "wb") as out:
        out.write(exp.serialize())

# OUT: result[0]{{.*}}: float32[2, 3] = {{\[\[}}1.        , 1.        , 1.        ],
# OUT-NEXT: [2.5231884, 2.5231884, 2.5231884]]

# BADARG: toolkit export run: error: --arg '1.5' for args[1] (f32[b,3]) has shape (), the parameter is float32[?, 3]

# COMPAT: consumer: cc=4..9,stablehlo=1.8.0
# COMPAT-NEXT: readable: no
# COMPAT-NEXT: - calling_convention_version is 10; the consumer reads up to 9
# COMPAT-NEXT: - the portable artifact is StableHLO 1.15.0; the consumer reads up to 1.8.0
# COMPAT-NEXT: convertible: yes (toolkit export convert {{.*}}.tmp.poly --calling-convention 9 --stablehlo-target 1.8.0 -o {{.*}}.tmp.converted.poly)

# BLOCKED: readable: no
# BLOCKED: convertible: no: the module uses stablehlo.composite in a form (vhlo.composite_v2) newer than StableHLO 0.15.0

# REFUSED: error: cannot convert: the module uses stablehlo.composite {{.*}}[blocked by: stablehlo.composite]

# JSON: "calling_convention_version": 8,
# JSON: "dimension_variables": [
# JSON-NEXT: {
# JSON-NEXT: "name": "b",
# JSON: "producer": "toolkit",
# JSON: "converted": "calling_convention_version, mlir_module_serialized",

# PLAIN: module @jit__lambda_ attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
# PLAIN-NEXT: func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
# PLAIN-NOT: _wrapped
# PLAIN-NOT: custom_call
