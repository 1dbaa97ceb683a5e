"""JAX's config-flag context managers at toolkit's top level, each with its effect, beside JAX's (issue 23)."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import toolkit
import toolkit.nn as tnn
import toolkit.numpy as tnp
from toolkit.core.config import config

jax = pytest.importorskip("jax")
jnp = jax.numpy

F32 = np.ones((2, 3), np.float32)
ROW = np.ones(3, np.float32)


# --- every flag: context manager, config.update, environment variable -------------------------------------------

FLAGS = {  # context manager name -> (JAX flag name, a non-default value)
    "log_compiles": ("jax_log_compiles", True),
    "explain_cache_misses": ("jax_explain_cache_misses", True),
    "no_tracing": ("jax_no_tracing", True),
    "no_execution": ("jax_no_execution", True),
    "check_tracer_leaks": ("jax_check_tracer_leaks", True),
    "numpy_rank_promotion": ("jax_numpy_rank_promotion", "raise"),
    "numpy_dtype_promotion": ("jax_numpy_dtype_promotion", "strict"),
    "default_matmul_precision": ("jax_default_matmul_precision", "highest"),
    "softmax_custom_jvp": ("jax_softmax_custom_jvp", True),
    "allow_f16_reductions": ("jax_allow_f16_reductions", False),
    "transfer_guard_host_to_device": ("jax_transfer_guard_host_to_device", "log"),
    "transfer_guard_device_to_device": ("jax_transfer_guard_device_to_device", "log"),
    "transfer_guard_device_to_host": ("jax_transfer_guard_device_to_host", "log"),
    "legacy_prng_key": ("jax_legacy_prng_key", "error"),
    "enable_custom_prng": ("jax_enable_custom_prng", True),
    "enable_checks": ("jax_enable_checks", True),
    "jax2tf_associative_scan_reductions": ("jax2tf_associative_scan_reductions", True),  # read by neither
}


def _plain(value):
    return getattr(value, "value", value)  # JAX's legacy_prng_key is an enum of the strings


@pytest.mark.parametrize("manager", sorted(FLAGS))
def test_context_manager_sets_the_flag_for_the_block(manager):
    name, value = FLAGS[manager]
    before = config.read(name)
    with getattr(toolkit, manager)(value):
        assert config.read(name) == value
        with getattr(jax, manager)(value):  # JAX has the same manager, flag name and value
            assert _plain(getattr(jax.config, name)) == value
    assert config.read(name) == before
    assert _plain(getattr(jax.config, name)) == before or name.startswith("jax_transfer_guard")  # JAX's: None


@pytest.mark.parametrize("manager", sorted(FLAGS))
def test_config_update_and_defaults_as_jax(manager):
    name, value = FLAGS[manager]
    assert config.read(name) == _plain(getattr(jax.config, name))
    default = config.read(name)
    config.update(name, value)
    try:
        assert config.read(name) == value
    finally:
        config.update(name, default)


@pytest.mark.parametrize("manager,bad", [("numpy_rank_promotion", "sometimes"), ("numpy_dtype_promotion", "loose"),
                                         ("default_matmul_precision", "fast"), ("transfer_guard", "never"),
                                         ("log_compiles", "yes please"), ("default_device", "abacus")])
def test_bad_values_are_refused_by_name(manager, bad):
    with pytest.raises((ValueError, TypeError), match=r"jax_\w+"):
        with getattr(toolkit, manager)(bad):
            pass


def test_environment_variables_set_the_start_up_values():
    code = ("import toolkit; c = toolkit.config; print(c.jax_log_compiles, c.jax_numpy_rank_promotion, "
            "c.jax_default_matmul_precision, c.jax_transfer_guard_host_to_device)")
    env = {"JAX_LOG_COMPILES": "1", "JAX_NUMPY_RANK_PROMOTION": "warn", "JAX_DEFAULT_MATMUL_PRECISION": "high",
           "JAX_TRANSFER_GUARD_HOST_TO_DEVICE": "disallow"}
    import os
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "warn", "high", "disallow"]
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "JAX_NUMPY_RANK_PROMOTION": "bogus"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0 and "JAX_NUMPY_RANK_PROMOTION" in proc.stderr


# --- numpy_rank_promotion / numpy_dtype_promotion ---------------------------------------------------------------

@pytest.mark.parametrize("level", ["warn", "raise"])
def test_rank_promotion_as_jax(level):
    outcomes = []
    for add, manager in ((tnp.add, toolkit.numpy_rank_promotion), (jnp.add, jax.numpy_rank_promotion)):
        with manager(level), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                add(F32, ROW)
                outcomes.append(("warned", str(caught[0].message)))
            except ValueError as error:
                outcomes.append(("raised", str(error)))
    assert outcomes[0] == outcomes[1]
    with toolkit.numpy_rank_promotion("raise"):  # same ranks and scalars are no rank promotion
        assert tnp.add(F32, F32).shape == (2, 3) and tnp.multiply(F32, 2.0).shape == (2, 3)
        assert (tnp.asarray(F32) + np.float32(1)).shape == (2, 3)


STRICT_CASES = [
    (np.ones(2, np.float32), np.ones(2, np.int32)), (np.ones(2, np.float32), 1), (np.ones(2, np.int32), 1.0),
    (np.ones(2, np.float16), np.ones(2, np.float32)), (np.ones(2, np.bool_), 1), (1, 2.0),
    (np.ones(2, np.complex64), 1.5), (np.ones(2, np.uint8), 3), (np.ones(2, np.int8), np.ones(2, np.int8)),
]


@pytest.mark.parametrize("a,b", STRICT_CASES, ids=[f"case{i}" for i in range(len(STRICT_CASES))])
def test_strict_dtype_promotion_as_jax(a, b):
    results = []
    for add, manager in ((tnp.add, toolkit.numpy_dtype_promotion), (jnp.add, jax.numpy_dtype_promotion)):
        with manager("strict"):
            try:
                results.append(str(add(a, b).dtype))
            except toolkit.errors.TypePromotionError as error:
                assert "jax_numpy_dtype_promotion=strict" in str(error)
                results.append("TypePromotionError")
            except jax.errors.JAXTypeError:  # pragma: no cover - not raised for these cases
                results.append("TypePromotionError")
            except Exception as error:  # JAX's TypePromotionError is its own class
                results.append(type(error).__name__)
    assert results[0] == results[1]


def test_strict_promotion_is_part_of_the_jit_cache_key():
    f = toolkit.jit(lambda x, y: x + y)
    assert f(np.ones(2, np.float32), np.ones(2, np.int32)).dtype == np.float32
    with toolkit.numpy_dtype_promotion("strict"), pytest.raises(toolkit.errors.TypePromotionError):
        f(np.ones(2, np.float32), np.ones(2, np.int32))


# --- default_matmul_precision -----------------------------------------------------------------------------------

def _dot_line(lowered):
    return re.search(r"stablehlo\.dot_general.*", lowered.as_text()).group(0)


@pytest.mark.parametrize("precision", [None, "highest", "float32", "high", "tensorfloat32", "bfloat16", "default"])
def test_default_matmul_precision_lowers_as_jax(precision):
    a = np.ones((2, 2), np.float32)
    with toolkit.default_matmul_precision(precision), jax.default_matmul_precision(precision):
        ours = _dot_line(toolkit.jit(lambda x, y: x @ y).lower(a, a))
        theirs = _dot_line(jax.jit(lambda x, y: x @ y).lower(a, a))
    expected = re.search(r"precision = \[\w+, \w+\]", theirs).group(0)
    if precision is None:
        assert "precision" not in ours  # toolkit writes no precision_config for DEFAULT (docs: same meaning)
    else:
        assert expected in ours, (ours, theirs)


def test_explicit_precision_wins_over_the_default():
    a = np.ones((2, 2), np.float32)
    with toolkit.default_matmul_precision("highest"):
        line = _dot_line(toolkit.jit(lambda x, y: toolkit.lax.dot(x, y, precision="high")).lower(a, a))
    assert "precision = [HIGH, HIGH]" in line


# --- softmax_custom_jvp / allow_f16_reductions -------------------------------------------------------------------

@pytest.mark.parametrize("masked", [False, True])
def test_softmax_custom_jvp_gradients_as_jax(masked):
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    where = np.array([[True, False, True], [True, True, True]]) if masked else None
    weights = np.arange(3, dtype=np.float32)
    with toolkit.softmax_custom_jvp(True), jax.softmax_custom_jvp(True):
        ours = toolkit.grad(lambda v: (tnn.softmax(v, where=where) * weights).sum())(x)
        theirs = jax.grad(lambda v: (jax.nn.softmax(v, where=where) * weights).sum())(x)
        jaxpr = str(toolkit.make_jaxpr(lambda v: tnn.softmax(v))(x))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    assert "custom_jvp_call" in jaxpr
    assert "custom_jvp_call" not in str(toolkit.make_jaxpr(lambda v: tnn.softmax(v))(x))


def test_f16_reductions_refused_as_jax():
    x = np.ones((2, 3), np.float16)
    with toolkit.allow_f16_reductions(False), jax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[2,3\] is not allowed when "
                                             r"jax_allow_f16_reductions=False"):
            toolkit.lax.reduce_sum(x, (1,))
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            jax.lax.reduce_sum(x, (1,))
        assert toolkit.lax.reduce_sum(np.ones((2, 1), np.float16), (1,)).shape == (2,)  # size-1 axes are fine
        assert toolkit.lax.reduce_sum(np.ones((2, 3), np.float32), (1,)).dtype == np.float32


# --- no_tracing / no_execution / check_tracer_leaks ---------------------------------------------------------------

def test_no_tracing_refuses_a_trace_cache_miss_as_jax():
    f = toolkit.jit(lambda x: x * 2)
    f(np.ones(3, np.float32))
    with toolkit.no_tracing(True):
        np.testing.assert_array_equal(f(np.ones(3, np.float32)), 2 * np.ones(3))  # traced before: runs
        with pytest.raises(RuntimeError, match=r"re-tracing function <lambda> for `jit`, but 'no_tracing' is set"):
            f(np.ones(4, np.float32))
    assert f(np.ones(4, np.float32)).shape == (4,)


def test_no_execution_refuses_every_run_as_jax():
    f = toolkit.jit(lambda x: x + 1)
    x = tnp.ones(3)
    f(x)
    with toolkit.no_execution(True):
        for _ in range(2):  # the fast path must not run it either
            with pytest.raises(RuntimeError, match=r"tried to execute function jit\(.*\), but the no_execution "
                                                   r"config option is set"):
                f(x)
        with pytest.raises(RuntimeError, match="no_execution"):
            tnp.sin(x)
        compiled = toolkit.jit(lambda x: x - 1).lower(x).compile()  # compiling is allowed, as in JAX
        with pytest.raises(RuntimeError, match="no_execution"):
            compiled(x)
    np.testing.assert_array_equal(f(x), 2 * np.ones(3))


def test_check_tracer_leaks_names_the_leak():
    leaked = []

    @toolkit.jit
    def f(x):
        leaked.append(x)
        return x * 2

    with toolkit.checking_leaks():
        with pytest.raises(toolkit.errors.UnexpectedTracerError, match=r"(?s)Leaked trace of f.*argument"):
            f(np.ones(2, np.float32))

        @toolkit.jit
        def g(x):  # an inner jit closing over an outer tracer is no leak
            y = x * 3
            return toolkit.jit(lambda z: z + y)(x)

        np.testing.assert_array_equal(g(np.ones(2, np.float32)), 4 * np.ones(2))
    leaked.clear()


# --- log_compiles / explain_cache_misses ------------------------------------------------------------------------

def test_log_compiles_logs_each_phase_at_warning(caplog):
    def to_log(x):
        return x * 5
    with caplog.at_level(logging.DEBUG, logger="toolkit.monitoring"):
        with toolkit.log_compiles(True):
            toolkit.jit(to_log)(np.ones(3, np.float32))
        toolkit.jit(to_log)(np.ones(5, np.float32))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("Finished tracing to_log for jit in ") for m in warned), warned
    assert any(m.startswith("Finished jaxpr to MLIR module conversion jit(to_log) in") for m in warned)
    assert any(m.startswith("Compiling jit(to_log) with global shapes and types") for m in warned)
    assert any(m.startswith("Finished XLA compilation of jit(to_log) in") for m in warned)
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(m.startswith("Finished XLA compilation of jit(to_log)") for m in debug)  # flag off: DEBUG


def test_explain_cache_misses(caplog):
    def explained(x):
        return x - 1
    with caplog.at_level(logging.WARNING, logger="toolkit.monitoring"), toolkit.explain_cache_misses(True):
        toolkit.jit(explained)(np.ones(3, np.float32))
        toolkit.jit(explained)(np.ones(3, np.float32))  # a hit: nothing
        toolkit.jit(explained)(np.ones(3, np.int32))
    messages = [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]
    assert len(messages) == 2, messages
    assert "never seen function" in messages[0] and "explained" in messages[0]
    assert "differs in: the arguments' types" in messages[1]


# --- transfer guards ----------------------------------------------------------------------------------------------

def _outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as error:  # jaxlib's JaxRuntimeError for both
        return f"{type(error).__name__}: {'Disallowed host-to-device' in str(error)}"


@pytest.mark.parametrize("level", ["allow", "log", "disallow", "disallow_explicit"])
def test_transfer_guard_as_jax(level):
    host = np.ones(3, np.float32)
    ours_f, theirs_f = toolkit.jit(lambda x: x * 2), jax.jit(lambda x: x * 2)
    ours_x, theirs_x = tnp.ones(3), jnp.ones(3)
    ours_f(ours_x)
    theirs_f(theirs_x)
    with toolkit.transfer_guard(level):
        ours = [_outcome(lambda: ours_f(host)), _outcome(lambda: toolkit.device_put(host)),
                _outcome(lambda: np.asarray(ours_x)), _outcome(lambda: toolkit.device_get(ours_x)),
                _outcome(lambda: ours_f(ours_x))]
    with jax.transfer_guard(level):
        theirs = [_outcome(lambda: theirs_f(host)), _outcome(lambda: jax.device_put(host)),
                  _outcome(lambda: np.asarray(theirs_x)), _outcome(lambda: jax.device_get(theirs_x)),
                  _outcome(lambda: theirs_f(theirs_x))]
    assert ours == theirs
    assert ours_f(host).shape == (3,)  # the block restored the guard


def test_transfer_guard_through_config_update():
    f = toolkit.jit(lambda x: x + 2)
    config.update("jax_transfer_guard", "disallow")
    try:
        assert config.jax_transfer_guard_host_to_device == "disallow"
        with pytest.raises(toolkit.errors.JaxRuntimeError, match="Disallowed host-to-device transfer"):
            f(np.ones(2, np.float32))
    finally:
        config.update("jax_transfer_guard", "allow")
    assert f(np.ones(2, np.float32)).shape == (2,)


# --- default_device -----------------------------------------------------------------------------------------------

def test_default_device_places_uncommitted_arrays_and_jit_as_jax():
    ours_devices = toolkit.devices()
    if len(ours_devices) < 2:
        pytest.skip("needs two devices")
    f = toolkit.jit(lambda x: x + 1)
    with toolkit.default_device(ours_devices[1]):
        ours = [tnp.ones(3), f(np.ones(3, np.float32)), toolkit.device_put(np.ones(2))]
        assert [a.devices() for a in ours] == [{ours_devices[1]}] * 3
        assert not ours[0].committed if hasattr(ours[0], "committed") else True
    assert tnp.ones(3).devices() == {ours_devices[0]}
    assert f(np.ones(3, np.float32)).devices() == {ours_devices[0]}
    with toolkit.default_device("cpu"):
        assert tnp.ones(1).devices() == {ours_devices[0]}
    # JAX's: the same placement (its process here may have one CPU device: then the platform form only).
    theirs_devices = jax.devices()
    target = theirs_devices[1] if len(theirs_devices) > 1 else "cpu"
    with jax.default_device(target):
        placed = [jnp.ones(3), jax.jit(lambda x: x + 1)(np.ones(3, np.float32)), jax.device_put(np.ones(2))]
    expected = theirs_devices[1] if len(theirs_devices) > 1 else theirs_devices[0]
    assert [a.devices() for a in placed] == [{expected}] * 3


# --- legacy_prng_key / enable_custom_prng / enable_checks / host_* ------------------------------------------------

@pytest.mark.parametrize("policy", ["allow", "warn", "error"])
def test_legacy_prng_key_as_jax(policy):
    outcomes = []
    for random, manager in ((toolkit.random, toolkit.legacy_prng_key), (jax.random, jax.legacy_prng_key)):
        with manager(policy), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                random.split(random.PRNGKey(0))
                outcomes.append(("ok", [str(w.message) for w in caught]))
            except ValueError as error:
                outcomes.append(("raised", str(error)))
            random.split(random.key(0))  # typed keys are never refused
    assert outcomes[0] == outcomes[1]


def test_enable_custom_prng_warns_on_raw_keys_as_jax():
    caught_both = []
    for random, manager in ((toolkit.random, toolkit.enable_custom_prng), (jax.random, jax.enable_custom_prng)):
        with manager(True), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            typed = random.PRNGKey(0)  # PRNGKey makes typed keys
            assert str(typed.dtype) == "key<fry>" and typed.shape == ()
            random.fold_in(typed, 1)
            random.fold_in(np.zeros(2, np.uint32), 1)  # a raw key warns
        caught_both.append([(w.category, str(w.message)) for w in caught])
    assert caught_both[0] == caught_both[1] and caught_both[0][0][0] is FutureWarning


def test_enable_checks_type_checks_jit_traces():
    from toolkit.core.program_checks import check_program
    x = np.ones((2, 4), np.float32)
    with toolkit.enable_checks(True):
        out = toolkit.jit(toolkit.grad(lambda w: tnn.softmax(x @ w).sum()))(np.ones((4, 3), np.float32))
        assert out.shape == (4, 3)
        scanned = toolkit.jit(lambda v: toolkit.lax.scan(lambda c, y: (c + y, c * y), 0.0, v))(np.arange(3.0))
        assert scanned[1].shape == (3,)
    program = toolkit.jit(lambda v: tnp.sin(v) * 2).trace(x).program
    check_program(program)
    program.eqns[0].outputs[0].aval = program.eqns[0].outputs[0].aval.update(shape=(3,))
    with pytest.raises(toolkit.errors.JaxprTypeError, match=r"equation 0 \(`sin`\).*f32\[3\].*f32\[2,4\]"):
        check_program(program)
    program.eqns[0].outputs[0].aval = program.eqns[0].outputs[0].aval.update(shape=(2, 4))
    program.eqns[1].inputs[0], program.eqns[0].outputs[0] = program.eqns[0].outputs[0], program.invars[0]
    with pytest.raises(toolkit.errors.JaxprTypeError, match="not defined"):
        check_program(program)


@pytest.mark.parametrize("name,renamed", [("host_count", "process_count"), ("host_id", "process_index"),
                                          ("host_ids", "process_indices")])
def test_host_aliases_warn_and_answer_as_jax(name, renamed):
    with pytest.warns(UserWarning, match=f"jax.{name} has been renamed to jax.{renamed}"):
        ours = getattr(toolkit, name)()
    with pytest.warns(UserWarning):
        theirs = getattr(jax, name)()
    assert ours == theirs


@pytest.mark.parametrize("partitionable", [False, True])
def test_threefry_partitionable_bit_exact_with_jax(partitionable):
    ours, theirs = toolkit.random, jax.random
    with toolkit.threefry_partitionable(partitionable), jax.threefry_partitionable(partitionable):
        for seed in (123456,):
            k1, k2 = ours.key(seed), theirs.key(seed)
            pairs = [
                (ours.key_data(ours.split(k1, (2, 3))), theirs.key_data(theirs.split(k2, (2, 3)))),
                (ours.key_data(ours.fold_in(k1, 5)), theirs.key_data(theirs.fold_in(k2, 5))),
                (ours.bits(k1, (3, 5)), theirs.bits(k2, (3, 5))),
                (ours.bits(k1, (7,), dtype=np.uint8), theirs.bits(k2, (7,), dtype=np.uint8)),
                (ours.bits(k1, (5,), dtype=np.uint16), theirs.bits(k2, (5,), dtype=np.uint16)),
                (ours.normal(k1, (4, 3)), theirs.normal(k2, (4, 3))),
                (ours.randint(ours.PRNGKey(seed), (6,), 0, 100), theirs.randint(theirs.PRNGKey(seed), (6,), 0, 100)),
            ]
            for a, b in pairs:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.x64
def test_threefry_original_64_bit_as_jax():
    with toolkit.threefry_partitionable(False), jax.threefry_partitionable(False), jax.enable_x64():
        a = toolkit.random.bits(toolkit.random.key(3), (5,), dtype=np.uint64)
        b = jax.random.bits(jax.random.key(3), (5,), dtype=np.uint64)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
