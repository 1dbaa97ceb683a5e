# A pass failing inside jit names a reproducer file in TOOLKIT_REPRODUCER_DIR that
# `toolkit-opt --run-reproducer` replays with the same failure.
# RUN: rm -rf %t.dir
# RUN: env TOOLKIT_REPRODUCER_DIR=%t.dir %python %s %inputs/pass_safety_plugin.py | filecheck %s
# RUN: not toolkit-opt %t.dir/jit_square-lit-divide-pattern-*.reproducer.mlir --run-reproducer --load-pass-plugin=%inputs/pass_safety_plugin.py 2>&1 | filecheck %s --check-prefix=REPLAY

# CHECK: PipelineError: pass 'lit-divide-pattern' failed: ZeroDivisionError
# CHECK-NEXT: reproducer of the failing pass: {{.*}}jit_square-lit-divide-pattern-{{.*}}.reproducer.mlir (replay: toolkit-opt --run-reproducer {{.*}})
# CHECK-NEXT: pass_name=lit-divide-pattern pipeline=builtin.module(lit-divide-pattern)
# CHECK-NEXT: files=1

# REPLAY: error: pass 'lit-divide-pattern' raised ZeroDivisionError: division by zero in pattern 'divide'

import os
import sys

import numpy as np

import toolkit
from toolkit.passes import PipelineError, load_pass_plugin, set_jit_pipeline

load_pass_plugin(sys.argv[1])
set_jit_pipeline("cse, lit-divide-pattern")


def square(x):
    return x * x


try:
    toolkit.jit(square)(np.ones(3, np.float32))
except PipelineError as error:
    print(f"PipelineError: {error}")
    print(f"pass_name={error.pass_name} pipeline={error.pass_pipeline}")
print(f"files={len(os.listdir(os.environ['TOOLKIT_REPRODUCER_DIR']))}")
