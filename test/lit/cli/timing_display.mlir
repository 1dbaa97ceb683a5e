// --mlir-timing times each pass, nested ones too; --mlir-timing-display=tree (default) groups them under
// their pipeline, =list sums per pass, slowest first.
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize), symbol-dce)' --mlir-timing -o /dev/null 2>&1 | filecheck %s --check-prefix=TREE
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize), symbol-dce)' --mlir-timing --mlir-timing-display=tree -o /dev/null 2>&1 | filecheck %s --check-prefix=TREE
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize), symbol-dce)' --mlir-timing --mlir-timing-display=list -o /dev/null 2>&1 | filecheck %s --check-prefix=LIST
// RUN: not toolkit-opt %s --cse --mlir-timing --mlir-timing-display=pie 2>&1 | filecheck %s --check-prefix=BAD

// TREE: ... Execution time report ...
// TREE: Total Execution Time: {{[0-9.]+}} seconds
// TREE: ----Wall Time----  ----Name----
// TREE-NEXT: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}  'func.func' Pipeline
// TREE-NEXT: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}    CSEPass
// TREE-NEXT: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}    CanonicalizerPass
// TREE-NEXT: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}  SymbolDCEPass
// TREE-NEXT: (100.0%)  Total

// LIST: ----Wall Time----  ----Name----
// LIST-NOT: Pipeline
// LIST-DAG: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}  CSEPass
// LIST-DAG: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}  CanonicalizerPass
// LIST-DAG: {{^}}  {{ *[0-9.]+ \( *[0-9.]+%\)}}  SymbolDCEPass
// LIST: (100.0%)  Total

// BAD: error: argument --mlir-timing-display: invalid choice: 'pie'

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
