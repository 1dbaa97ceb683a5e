// An upstream self-checking program: @inputs() become runtime parameters.
// REQUIRES: shared-corpora
// RUN: toolkit-run %corpora/stablehlo_testdata/abs_float32_20_20.mlir --no-print-results | filecheck %s
// RUN: toolkit-run %corpora/stablehlo_testdata/abs_float32_20_20.mlir --constant-inputs --no-print-results | filecheck %s

// CHECK: check[0] PASS: expect_close float32[20, 20]: ok
// CHECK: 1/1 checks passed
