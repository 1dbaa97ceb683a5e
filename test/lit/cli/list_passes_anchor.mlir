// --list-passes names each pass's anchor op and its option syntax.
// RUN: toolkit-opt --list-passes | filecheck %s

// CHECK-DAG: {{^}}  cse {{ *}}any {{ *}}[c++] Eliminate common sub-expressions.
// CHECK-DAG: {{^}}  stablehlo-refine-shapes {{ *}}builtin.module {{ *}}[c++]
// CHECK-DAG: {{^}}  sdy-close-shardings {{ *}}builtin.module {{ *}}[c++]
// CHECK-DAG: {{^}}  toolkit-simplify {{ *}}any {{ *}}[python]
// CHECK-DAG: syntax: toolkit-op-stats{format=table|json output=str}  or  --toolkit-op-stats='format=table|json output=str'
// CHECK-DAG: syntax: canonicalize{cse-between-iterations=value max-iterations=value
