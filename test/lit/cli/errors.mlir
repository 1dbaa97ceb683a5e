// Unknown names and bad options: exit 1 with the close registered names.
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-simplfy)' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not toolkit-opt %s --canonicalise 2>&1 | filecheck %s --check-prefix=CXX
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-simplify{iee-strict=true})' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-op-stats{format=xml})' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(cse{bogus=1})' 2>&1 | filecheck %s --check-prefix=CXXOPT
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not toolkit-opt %t.does-not-exist 2>&1 | filecheck %s --check-prefix=MISSING

// UNKNOWN: error: unknown pass 'toolkit-simplfy'; did you mean: toolkit-simplify
// CXX: error: unknown pass 'canonicalise'; did you mean: canonicalize
// OPTION: error: pass 'toolkit-simplify' has no option 'iee-strict' (options: ieee-strict); did you mean ieee-strict?
// VALUE: error: pass 'toolkit-op-stats': option 'format' expects one of table, json, got 'xml'
// CXXOPT: error: bad options for 'cse{bogus=1}'
// SYNTAX: error: bad pipeline: expected ',' or ')'
// MISSING: error: cannot read {{.*}}does-not-exist
func.func @f() {
  return
}
