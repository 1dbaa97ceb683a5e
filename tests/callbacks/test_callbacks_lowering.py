"""How host callbacks lower and compile, beside JAX's lowering; exports and serialization refuse them."""

import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("jax.experimental")  # jax.experimental.io_callback
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.export  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit.core import host_callbacks  # noqa: E402
from toolkit.runtime import host_callbacks as runtime_callbacks  # noqa: E402

CALL = re.compile(r"stablehlo\.custom_call @(\w+)\(([^)]*)\) \{([^}]*\}[^}]*)\} : \(([^)]*)\) -> (.*)")


def callback_calls(text):
    """(target, has_side_effect, operand types, result types) of each callback custom call in ``text``."""
    calls = []
    for line in text.splitlines():
        m = CALL.search(line)
        if m and "python_cpu_callback" in m.group(1):
            calls.append((m.group(1), "has_side_effect = true" in m.group(3), m.group(4).strip(),
                          m.group(5).strip()))
    return calls


def program(N, io_callback, x):
    N.debug.print("x={x}", x=x)
    y = N.pure_callback(np.sin, N.ShapeDtypeStruct(x.shape, x.dtype), x)
    z = io_callback(lambda a: a * 2, N.ShapeDtypeStruct(x.shape, x.dtype), y, ordered=True)
    N.debug.callback(lambda a: None, z, ordered=True)
    return z


def test_lowering_matches_jax_custom_calls():
    t_text = toolkit.jit(lambda x: program(toolkit, toolkit.experimental.io_callback, x)).lower(tnp.ones(3)).as_text()
    j_text = jax.jit(lambda x: program(jax, jax.experimental.io_callback, x)).lower(jnp.ones(3)).as_text()
    t_calls, j_calls = callback_calls(t_text), callback_calls(j_text)
    assert len(t_calls) == 4
    assert t_calls == j_calls  # targets, side effects, tokens first for the ordered ones, types
    for text in (t_text, j_text):
        assert 'backend_config = ""' in text and re.search(r"mhlo\.backend_config = \{index = \d+ : ui64\}", text)
    # JAX threads its tokens through @main; toolkit starts one chain per function body.
    assert "stablehlo.create_token" in t_text


def test_indices_name_the_callbacks_in_the_process_table():
    lowered = toolkit.jit(lambda x: program(toolkit, toolkit.experimental.io_callback, x)).lower(tnp.ones(3))
    from jaxlib.mlir import ir
    from toolkit.ir.context import shared_context
    with shared_context():
        module = ir.Module.parse(lowered.as_text())
    indices = runtime_callbacks.callback_indices(module)
    assert len(indices) == 4 and len(set(indices)) == 4
    kinds = [host_callbacks.lookup(i).kind for i in indices]
    assert kinds == ["debug.print", "pure_callback", "io_callback", "debug.callback"]


def test_ordered_tokens_chain_in_program_order():
    def f(x):
        for i in range(3):
            toolkit.debug.print("{}", x + i, ordered=True)
        return x
    text = toolkit.jit(f).lower(np.float32(1)).as_text()
    assert text.count("stablehlo.create_token") == 1
    assert text.count("!stablehlo.token") >= 3


def test_export_refuses_callbacks_as_jax_does():
    def f(x):
        toolkit.debug.print("{}", x)
        return x
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks is not yet implemented"):
        toolkit.export.export(toolkit.jit(f))(tnp.ones(3))
    g = lambda x: toolkit.pure_callback(np.sin, toolkit.ShapeDtypeStruct((3,), np.float32), x)
    with pytest.raises(NotImplementedError, match="host_callbacks"):
        toolkit.export.export(toolkit.jit(g), disabled_checks=[
            toolkit.export.DisabledSafetyCheck.custom_call("xla_ffi_python_cpu_callback")])(tnp.ones(3))
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks is not yet implemented"):
        jax.export.export(jax.jit(lambda x: (jax.debug.print("{}", x), x)[1]))(jnp.ones(3))


def test_compiled_serialize_refuses_callbacks():
    compiled = toolkit.jit(lambda x: (toolkit.debug.print("{}", x), x + 1)[1]).lower(tnp.ones(3)).compile()
    with pytest.raises(ValueError, match="cannot serialize an executable with host callbacks"):
        compiled.serialize()
    np.testing.assert_array_equal(np.asarray(compiled(tnp.ones(3))), 2 * np.ones(3))


def test_a_module_naming_an_unknown_callback_does_not_compile():
    text = """
    func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0) {backend_config = "",
          mhlo.backend_config = {index = 999999 : ui64}} : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }"""
    with pytest.raises(ValueError, match="host callback #999999"):
        toolkit.load_module(text).compile()


def test_the_table_holds_only_the_callbacks_a_module_calls():
    keep = host_callbacks.HostCallback(lambda: (), (), kind="debug.callback")
    other = host_callbacks.HostCallback(lambda: (), (), kind="debug.callback")
    i, j = host_callbacks.index_of(keep), host_callbacks.index_of(other)
    assert host_callbacks.index_of(keep) == i  # numbered once
    table = host_callbacks.table([i])
    assert table[i] is keep and table[j] is not other
    with pytest.raises(RuntimeError, match="released"):
        table[j]()


def test_a_released_callback_cannot_be_compiled_against():
    import gc
    gone = host_callbacks.HostCallback(lambda: (), (), kind="debug.callback")
    i = host_callbacks.index_of(gone)
    del gone
    gc.collect()
    assert host_callbacks.lookup(i) is None
    with pytest.raises(ValueError, match=f"host callback #{i}"):
        host_callbacks.table([i])


def test_host_callback_checks_what_it_wraps():
    with pytest.raises(TypeError, match="must be callable"):
        host_callbacks.HostCallback(3, (), kind="pure_callback")


def test_a_jax_module_with_callbacks_is_refused_not_run_against_ours():
    # Its callback numbers index JAX's table, not toolkit's: compiling would call the wrong functions.
    toolkit.jit(lambda x: (toolkit.debug.print("ours {}", x), x)[1])(tnp.ones(1))  # numbers 0.. are taken here
    lowered = jax.jit(lambda x: (jax.debug.print("{}", x), x + 1)[1]).lower(jnp.ones(3))
    with pytest.raises(ValueError, match="was not lowered by this process"):
        toolkit.load_module(lowered).compile()


def test_callback_calls_carry_this_process_mark():
    text = toolkit.jit(lambda x: (toolkit.debug.print("{}", x), x)[1]).lower(tnp.ones(1)).as_text()
    assert f'toolkit.host_callback = "{host_callbacks.SESSION}:' in text
