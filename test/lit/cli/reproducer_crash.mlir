// --mlir-pass-pipeline-crash-reproducer=FILE: a failing pass leaves MLIR's reproducer format in FILE (the
// input and the whole pipeline, as mlir-opt's default); --run-reproducer replays the same failure.
// RUN: rm -f %t.repro.mlir
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py -p 'builtin.module(func.func(cse), lit-divide-pattern, canonicalize)' --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | filecheck %s --check-prefix=ERR
// RUN: filecheck %s --check-prefix=REPRO < %t.repro.mlir
// RUN: not toolkit-opt %t.repro.mlir --run-reproducer --load-pass-plugin=%inputs/pass_safety_plugin.py 2>&1 | filecheck %s --check-prefix=REPLAY
// A run that succeeds leaves no file:
// RUN: rm -f %t.ok.mlir
// RUN: toolkit-opt %s --cse --mlir-pass-pipeline-crash-reproducer=%t.ok.mlir -o /dev/null
// RUN: not ls %t.ok.mlir
// A file that is not a reproducer is a usage error:
// RUN: not toolkit-opt %s --run-reproducer 2>&1 | filecheck %s --check-prefix=NOTREPRO

// ERR: reproducer_crash.mlir:[[# @LINE + 25]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError
// ERR-NEXT: reproducer_crash.mlir: note: Pipeline failed while executing `DividePatternPass`: reproducer generated at `{{.*}}repro.mlir`
// ERR-NOT: error

// REPRO: module {
// REPRO: stablehlo.add %arg0, %arg0 : tensor<4xf32> loc(
// REPRO: stablehlo.add %arg0, %arg0 : tensor<4xf32> loc(
// REPRO: {-#
// REPRO-NEXT:   external_resources: {
// REPRO-NEXT:     mlir_reproducer: {
// REPRO-NEXT:       pipeline: "builtin.module(func.func(cse), lit-divide-pattern, canonicalize)",
// REPRO-NEXT:       disable_threading: true,
// REPRO-NEXT:       verify_each: true
// REPRO-NEXT:     }
// REPRO-NEXT:   }
// REPRO-NEXT: #-}

// The replayed failure points at the original input.
// REPLAY: reproducer_crash.mlir:[[# @LINE + 7]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError

// NOTREPRO: toolkit-opt: error: --run-reproducer: {{.*}}reproducer_crash.mlir is not a reproducer: no '{-# external_resources: { mlir_reproducer:

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
