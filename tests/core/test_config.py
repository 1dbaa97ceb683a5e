"""toolkit.config: JAX's flag names, values by attribute and read(), update(), enable_x64, cache_state, errors."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import toolkit
from toolkit.core import config as config_module
from toolkit.core.config import FlagDefinition, cache_state, define_flag, flag_value, x64_enabled


def test_exports():
    assert toolkit.config is config_module.config
    assert toolkit.enable_x64 is config_module.enable_x64


def test_default_is_x64_off():
    assert toolkit.config.jax_enable_x64 is False
    assert toolkit.config.read("jax_enable_x64") is False
    assert x64_enabled() is False
    assert toolkit.config.values["jax_enable_x64"] is False
    assert "jax_enable_x64" in dir(toolkit.config)
    assert "jax_enable_x64=False" in repr(toolkit.config)


def test_update_and_restore():
    state = cache_state()
    toolkit.config.update("jax_enable_x64", True)
    try:
        assert toolkit.config.jax_enable_x64 is True and x64_enabled()
        assert cache_state() != state
    finally:
        toolkit.config.update("jax_enable_x64", False)
    assert cache_state() == state and not x64_enabled()


def test_update_accepts_ints_and_numpy_bools():
    try:
        toolkit.config.update("jax_enable_x64", 1)
        assert toolkit.config.jax_enable_x64 is True
        toolkit.config.update("jax_enable_x64", np.bool_(False))
        assert toolkit.config.jax_enable_x64 is False
    finally:
        toolkit.config.update("jax_enable_x64", False)


def test_unknown_flag_is_refused_by_name():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_flag"):
        toolkit.config.update("jax_no_such_flag", True)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_flag"):
        toolkit.config.read("jax_no_such_flag")
    with pytest.raises(AttributeError, match="jax_no_such_flag.*toolkit has: .*jax_enable_x64"):
        _ = toolkit.config.jax_no_such_flag
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        with config_module.flag_override("jax_no_such_flag", True):
            pass


def test_bad_value_type_names_the_flag():
    for bad in ("yes", 2, None, 1.0):
        with pytest.raises(TypeError, match="jax_enable_x64 takes a bool"):
            toolkit.config.update("jax_enable_x64", bad)
    with pytest.raises(TypeError, match="jax_enable_x64 takes a bool"):
        with toolkit.enable_x64("on"):
            pass
    assert toolkit.config.jax_enable_x64 is False


def test_attributes_are_read_only():
    with pytest.raises(AttributeError, match=r"toolkit.config.update\('jax_enable_x64', value\)"):
        toolkit.config.jax_enable_x64 = True


def test_enable_x64_context_nests_and_restores():
    assert not x64_enabled()
    with toolkit.enable_x64():
        assert x64_enabled() and toolkit.config.jax_enable_x64
        with toolkit.enable_x64(False):
            assert not x64_enabled()
            assert flag_value("jax_enable_x64") is False
        assert x64_enabled()
    assert not x64_enabled()


def test_enable_x64_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with toolkit.enable_x64():
            raise RuntimeError("inside")
    assert not x64_enabled()
    assert cache_state() is config_module._global_cache_state  # no override block left open


def test_enable_x64_is_thread_local():
    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def other():
        inside.wait(10)
        seen["other"] = x64_enabled()
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with toolkit.enable_x64():
        inside.set()
        done.wait(10)
        seen["this"] = x64_enabled()
    thread.join(10)
    assert seen == {"this": True, "other": False}


def test_override_wins_over_update():
    try:
        with toolkit.enable_x64(False):
            toolkit.config.update("jax_enable_x64", True)
            assert not x64_enabled()
        assert x64_enabled()
    finally:
        toolkit.config.update("jax_enable_x64", False)


def test_cache_state_is_cheap_and_changes_with_the_flag():
    assert cache_state() is cache_state()  # one prebuilt tuple while no override block is open
    off = cache_state()
    with toolkit.enable_x64():
        on = cache_state()
    # jax_enable_x64 comes first; the other flags in the key (jax_debug_nans, jax_numpy_rank_promotion, ...) stay.
    assert off[0] is False and on == (True,) + off[1:]


def test_define_flag_refuses_a_second_definition():
    with pytest.raises(ValueError, match="already defined"):
        define_flag(FlagDefinition("jax_enable_x64", False, help="again"))


def test_parse_bool():
    assert config_module.parse_bool(" On ") is True and config_module.parse_bool("0") is False
    with pytest.raises(ValueError, match="expected a boolean"):
        config_module.parse_bool("maybe")


def _run(code: str, value: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TOOLKIT_ENABLE_X64", None)
    if value is not None:
        env["TOOLKIT_ENABLE_X64"] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_environment_variable_sets_the_start_up_value():
    # Only toolkit.core.config is imported: the flag, not the backend (fast).
    code = "from toolkit.core.config import config; print(config.jax_enable_x64)"
    assert _run(code, "1").stdout.strip() == "True"
    assert _run(code, "false").stdout.strip() == "False"
    assert _run(code, None).stdout.strip() == "False"


def test_bad_environment_variable_is_a_clear_error():
    result = _run("import toolkit.core.config", "maybe")
    assert result.returncode != 0
    assert "TOOLKIT_ENABLE_X64='maybe'" in result.stderr and "jax_enable_x64" in result.stderr
