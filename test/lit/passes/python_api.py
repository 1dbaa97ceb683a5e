# Pipelines from Python: text round trip, mixed Python/C++ runs, statistics.
# RUN: %PYTHON %s | filecheck %s

import io

from jaxlib.mlir import ir

from toolkit.ir.context import make_context
from toolkit.passes import parse_pipeline, run_pipeline


def run(fn):
    print(f"TEST: {fn.__name__}")
    fn()
    return fn


def module():
    with make_context():
        return ir.Module.parse("""
        func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
          %one = stablehlo.constant dense<1.0> : tensor<2xf32>
          %0 = stablehlo.multiply %x, %one : tensor<2xf32>
          %1 = stablehlo.multiply %x, %one : tensor<2xf32>
          %2 = stablehlo.add %0, %1 : tensor<2xf32>
          return %2 : tensor<2xf32>
        }""")


# CHECK-LABEL: TEST: round_trip
# CHECK-NEXT: builtin.module(func.func(canonicalize), toolkit-simplify{ieee-strict=true}, symbol-dce)
@run
def round_trip():
    print(parse_pipeline("func.func(canonicalize),toolkit-simplify{ieee-strict=true},symbol-dce"))


# CHECK-LABEL: TEST: mixed_run
# CHECK: func.func(cse) changed=True
# CHECK-NEXT: toolkit-simplify changed=True {'multiply_one': 1}
# CHECK-NEXT: canonicalize changed=False
# CHECK: %[[S:.*]] = stablehlo.add %arg0, %arg0
# CHECK-NEXT: return %[[S]]
@run
def mixed_run():
    m = module()
    report = run_pipeline(m, "func.func(cse), toolkit-simplify, canonicalize", print_ir_after=True,
                          stream=io.StringIO())
    for record in report.records:
        print(record.label, f"changed={record.changed}", record.statistics or "")
    print(m)
