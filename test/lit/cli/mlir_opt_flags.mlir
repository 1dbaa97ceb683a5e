// mlir-opt's printing and input flags, which used to be taken for pass names.
// RUN: toolkit-opt --version | filecheck %s --check-prefix=VERSION
// RUN: toolkit-run --version | filecheck %s --check-prefix=VERSION
// RUN: %PYTHON -m toolkit.tools.export_cli --version | filecheck %s --check-prefix=VERSION
// RUN: toolkit-opt %s --mlir-print-op-generic --allow-unregistered-dialect | filecheck %s --check-prefix=GENERIC
// RUN: toolkit-opt %s -mlir-print-debuginfo -allow-unregistered-dialect | filecheck %s --check-prefix=DEBUGINFO
// RUN: toolkit-opt %s --allow-unregistered-dialect | filecheck %s --check-prefix=UNREGISTERED
// RUN: not toolkit-opt %s 2>&1 | filecheck %s --check-prefix=REGISTERED-ONLY
// Standard input: '-', or no input file at all.
// RUN: toolkit-opt - --allow-unregistered-dialect < %s | filecheck %s --check-prefix=UNREGISTERED
// RUN: toolkit-opt --allow-unregistered-dialect < %s | filecheck %s --check-prefix=UNREGISTERED
// An unwritable -o is one line, not a traceback.
// RUN: not toolkit-opt %s --allow-unregistered-dialect -o %t.missing-dir/out.mlir 2>&1 | filecheck %s --check-prefix=UNWRITABLE

// VERSION: (toolkit {{[0-9.]+}})
// VERSION-NEXT: jaxlib {{[0-9.]+}}
// VERSION-NEXT: StableHLO {{[0-9.]+}} (reads and writes portable artifacts {{[0-9.]+}} .. {{[0-9.]+}})
// GENERIC: "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}>
// GENERIC: "stablehlo.negate"(%arg0)
// DEBUGINFO: stablehlo.negate %arg0 : tensor<2xf32> loc(
// UNREGISTERED: "test.unknown"() : () -> ()
// REGISTERED-ONLY: mlir_opt_flags.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: {{.*}}unregistered dialect
// UNWRITABLE: toolkit-opt: error: cannot write '{{.*}}missing-dir/out.mlir': No such file or directory
// UNWRITABLE-NOT: Traceback
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

func.func @opaque() {
  "test.unknown"() : () -> ()
  return
}
