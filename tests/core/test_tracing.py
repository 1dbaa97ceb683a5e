"""Tracing into programs, and the errors users meet while tracing."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core.program import Program
from toolkit.core.tracing import ConcretizationTypeError, TracerArrayConversionError, UnexpectedTracerError

f32 = toolkit.ShapeDtypeStruct((3,), np.float32)


def test_program_structure_and_printing():
    traced = toolkit.jit(lambda x, y: tnp.sin(x) * y + 1.0).trace(f32, f32)
    program = traced.program
    assert isinstance(program, Program)
    assert [e.primitive.name for e in program.eqns] == ["sin", "mul", "broadcast_in_dim", "add"]
    text = str(program)
    assert text.startswith("{ lambda ; a:f32[3] b:f32[3]. let")
    assert "c:f32[3] = sin a" in text
    assert text.rstrip().endswith("in (f,) }")


def test_source_info_points_at_user_code():
    def f(x):
        return tnp.exp(x)  # the line below is what the program records
    traced = toolkit.jit(f).trace(f32)
    eqn = traced.program.eqns[0]
    assert eqn.source_info.file == __file__
    assert eqn.source_info.function == "test_source_info_points_at_user_code.<locals>.f"  # qualified, as JAX's
    assert f"test_tracing.py:{eqn.source_info.line}" in traced.as_text(source_info=True)


def test_python_if_on_traced_value_names_op_and_points_to_cond():
    def f(x):
        if tnp.sum(x) > 0:
            return x
        return -x
    with pytest.raises(ConcretizationTypeError) as info:
        toolkit.jit(f).trace(f32)
    message = str(info.value)
    assert "`gt`" in message and "lax.cond" in message and "static_argnums" in message


def test_int_of_argument_names_the_argument():
    with pytest.raises(ConcretizationTypeError, match=r"argument args\[0\] of f"):
        def f(x):
            return int(x)
        toolkit.jit(f).trace(toolkit.ShapeDtypeStruct((), np.int32))


def test_numpy_conversion_inside_trace_is_refused():
    with pytest.raises(TracerArrayConversionError, match="toolkit.numpy instead of numpy"):
        toolkit.jit(lambda x: np.sin(np.asarray(x))).trace(f32)


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x + 1

    toolkit.jit(f).trace(f32)
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        toolkit.jit(lambda y: y + leaked[0]).trace(f32)
    with pytest.raises(UnexpectedTracerError, match="leaked tracer"):
        tnp.sin(leaked[0])


def test_unsupported_argument_type():
    with pytest.raises(TypeError, match=r"argument args\[0\] of type str is not a valid jit argument"):
        toolkit.jit(lambda s: s).trace("hello")


def test_unsupported_return_type():
    with pytest.raises(TypeError, match="returned a value of type str"):
        toolkit.jit(lambda x: "nope").trace(f32)


def test_constants_become_program_constants():
    table = np.arange(3, dtype=np.float32)
    program = toolkit.jit(lambda x: x + table).trace(f32).program
    assert len(program.constvars) == 1 and program.consts[0] is table


def test_shape_errors_name_the_operands():
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        toolkit.jit(lambda x, y: x + y).trace(f32, toolkit.ShapeDtypeStruct((4,), np.float32))
    operands = (toolkit.ShapeDtypeStruct((2, 3), np.float32), toolkit.ShapeDtypeStruct((4, 5), np.float32))
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions to have the same shape"):
        toolkit.jit(lambda x, y: toolkit.lax.dot_general(x, y, (((1,), (0,)), ((), ())))).trace(*operands)
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):  # lax.dot's check, as JAX's
        toolkit.jit(lambda x, y: toolkit.lax.dot(x, y)).trace(*operands)
