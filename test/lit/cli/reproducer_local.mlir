// --mlir-pass-pipeline-local-reproducer: the reproducer holds the module just before the failing pass
// and that pass alone; --run-reproducer replays it.
// RUN: rm -f %t.repro.mlir
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py -p 'builtin.module(func.func(cse, canonicalize), lit-divide-pattern, symbol-dce)' --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir --mlir-pass-pipeline-local-reproducer 2>&1 | filecheck %s --check-prefix=ERR
// RUN: filecheck %s --check-prefix=REPRO < %t.repro.mlir
// RUN: not toolkit-opt %t.repro.mlir --run-reproducer --load-pass-plugin=%inputs/pass_safety_plugin.py 2>&1 | filecheck %s --check-prefix=REPLAY
// A local reproducer needs the file:
// RUN: not toolkit-opt %s --cse --mlir-pass-pipeline-local-reproducer 2>&1 | filecheck %s --check-prefix=USAGE

// ERR: reproducer_local.mlir:[[# @LINE + 17]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError
// ERR: note: Pipeline failed while executing `DividePatternPass`: reproducer generated at

// After cse, before the failing pass: one add left.
// REPRO: stablehlo.add %arg0, %arg0
// REPRO-NOT: stablehlo.add
// REPRO: stablehlo.multiply %0, %0
// REPRO: pipeline: "builtin.module(lit-divide-pattern)",

// REPLAY: reproducer_local.mlir:[[# @LINE + 8]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError
// REPLAY-NOT: error

// USAGE: toolkit-opt: error: --mlir-pass-pipeline-local-reproducer needs --mlir-pass-pipeline-crash-reproducer=FILE

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
