// jaxlib's C++ `inline` inlines no func.call (the func dialect's inliner interface is not registered in
// jaxlib): toolkit-opt does not list it and says so when asked for it.
// RUN: toolkit-opt --list-passes | filecheck %s --check-prefix=LIST
// RUN: not toolkit-opt %s --inline 2>&1 | filecheck %s
// RUN: not toolkit-opt %s -p 'builtin.module(inline, cse)' 2>&1 | filecheck %s

// LIST-NOT: {{^  inline }}
// LIST: symbol-dce
// CHECK: toolkit-opt: error: pass 'inline': jaxlib's C++ inliner inlines no func.call here
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
