// RUN: toolkit-opt --list-passes | filecheck %s

// CHECK: Available passes
// CHECK-DAG: canonicalize {{.*}}[c++]
// CHECK-DAG: stablehlo-refine-shapes {{.*}}[c++]
// CHECK-DAG: toolkit-op-stats {{.*}}[python] Count operations per op name and per dialect
// CHECK-DAG: format=table|json  (default: table)
// CHECK-DAG: toolkit-simplify {{.*}}[python]
// CHECK-DAG: ieee-strict=bool  (default: false)
