"""Compiling with XLA (runtime/executable.py): an ``ir.Module`` goes to XLA as it is, left unchanged."""

import io

import numpy as np
import pytest
from jaxlib.mlir import ir

import toolkit
import toolkit.numpy as tnp
from toolkit.runtime import executable as runtime_executable
from toolkit.runtime.standalone import execute
from toolkit.runtime.client import default_device


def _lowered_module():
    lowered = toolkit.jit(lambda x, y: tnp.sin(x) * y + x @ y.T).lower(
        np.ones((3, 3), np.float32), np.ones((3, 3), np.float32))
    with lowered._module.context:
        return ir.Module.parse(lowered._bytecode())


def _bytecode(module):
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def test_an_ir_module_compiles_as_its_bytecode_does_and_is_left_unchanged():
    module = _lowered_module()
    before = module.operation.get_asm(enable_debug_info=True)
    serialized = _bytecode(module)
    from_module = runtime_executable.compile_module(module, [default_device()], serialized=serialized)
    from_bytes = runtime_executable.compile_module(serialized, [default_device()])
    assert module.operation.get_asm(enable_debug_info=True) == before  # XLA's conversion works on its own copy
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    y = np.full((3, 3), 0.5, np.float32)
    np.testing.assert_array_equal(execute(from_module, [x, y])[0], execute(from_bytes, [x, y])[0])
    # Locations survive either way: XLA names the ops after them.
    assert from_module.hlo_modules()[0].to_string().count("op_name=") == \
        from_bytes.hlo_modules()[0].to_string().count("op_name=") > 0


def test_a_bad_compiler_option_is_named():
    with pytest.raises(ValueError, match="xla_no_such_option"):
        runtime_executable.compile_module(_lowered_module(), [default_device()],
                                          compiler_options={"xla_no_such_option": True})
