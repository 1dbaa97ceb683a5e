// --mlir-print-debuginfo shows the input file's name in locations (standard input: <stdin>); with
// --split-input-file lines count from the start of each piece, as in mlir-opt.
// RUN: toolkit-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: toolkit-opt --mlir-print-debuginfo < %s | filecheck %s --check-prefix=STDIN

// CHECK: stablehlo.negate %arg0 : tensor<2xf32> loc(#[[LOC:loc[0-9]*]])
// CHECK: #[[LOC]] = loc("{{.*}}print_debuginfo_filename.mlir":[[# @LINE + 4]]:8)
// STDIN: #{{loc[0-9]*}} = loc("<stdin>":[[# @LINE + 3]]:8)

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
