"""The persistent compilation cache (toolkit.compilation_cache): hits, misses, damage, eviction, thresholds, API.

Functions are made fresh for each compilation (``_fresh``): jit's in-memory caches key on the
Python function, so a new function object with the same code compiles the same module again
and only the persistent cache can answer. ``statistics()["xla_compiles"]`` counts XLA's
compilations, the evidence of a hit that timing cannot give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import compilation_cache as cc
from toolkit.core.config import config
from toolkit.export import symbolic_shape
from toolkit.runtime import executable as runtime_executable

_FLAGS = ("jax_compilation_cache_dir", "jax_enable_compilation_cache", "jax_persistent_cache_min_compile_time_secs",
          "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
          "jax_compilation_cache_include_metadata_in_key", "jax_raise_persistent_cache_errors")

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


@pytest.fixture(autouse=True)
def _restore_flags():
    saved = {name: config.read(name) for name in _FLAGS}
    cc.reset_statistics()
    yield
    for name, value in saved.items():
        config.update(name, value)


@pytest.fixture
def cache(tmp_path):
    """A fresh cache folder, on, writing every compilation (no compile-time threshold)."""
    directory = tmp_path / "cache"
    cc.set_cache_dir(directory)
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return directory


def _fresh(scale: float = 2.0):
    def f(x):
        return tnp.sin(x) * scale + 1.0
    return f


def _expected(scale: float = 2.0) -> np.ndarray:
    return np.sin(X) * np.float32(scale) + np.float32(1.0)


def _run(fun=None, *args, **jit_kwargs) -> np.ndarray:
    fun = fun or _fresh()
    return np.asarray(toolkit.jit(fun, **jit_kwargs)(*(args or (X,))))


def _compiles() -> int:
    return int(cc.statistics()["xla_compiles"])


def _only_entry(directory) -> str:
    (entry,) = cc.entries()
    assert os.path.dirname(entry.path) == str(directory)
    return entry.path


# --- hits ----------------------------------------------------------------------------------------------


def test_a_fresh_function_with_the_same_program_loads_instead_of_compiling(cache):
    np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    first = cc.statistics()
    assert (first["misses"], first["writes"], first["xla_compiles"]) == (1, 1, 1)
    np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    second = cc.statistics()
    assert (second["hits"], second["xla_compiles"], second["writes"]) == (1, 1, 1)
    assert second["seconds_saved"] > 0


def test_lowered_compile_and_load_module_hit(cache):
    lowered = toolkit.jit(_fresh()).lower(X)
    text = lowered.as_text()
    lowered.compile()
    assert _compiles() == 1
    np.testing.assert_allclose(np.asarray(toolkit.jit(_fresh()).lower(X).compile()(X)), _expected(), rtol=1e-6)
    assert _compiles() == 1
    loaded = toolkit.load_module(text).compile()
    loaded_again = toolkit.load_module(text).compile()
    # The loaded module is jit's printed and parsed again (not byte-identical): its own entry, then a hit.
    assert _compiles() == 2 and cc.statistics()["hits"] == 2
    np.testing.assert_allclose(np.asarray(loaded_again(X)), _expected(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(loaded(X)), _expected(), rtol=1e-6)


def test_shape_polymorphic_compilations_hit(cache):
    spec = toolkit.ShapeDtypeStruct(symbolic_shape("b, 4"), np.float32)
    for _ in range(2):
        compiled = toolkit.jit(_fresh()).lower(spec).compile()
        np.testing.assert_allclose(np.asarray(compiled(X)), _expected(), rtol=1e-6)
    assert _compiles() == 1 and cc.statistics()["hits"] == 1


def _defined_elsewhere():
    """``_fresh()``'s program, from another file and line (jit names the module after the function: also f)."""
    namespace: dict = {"tnp": tnp}
    exec(compile("\n\n\ndef f(x):\n    return tnp.sin(x) * 2.0 + 1.0\n", "elsewhere.py", "exec"), namespace)
    return namespace["f"]


def test_source_locations_are_not_part_of_the_key_unless_asked(cache):
    _run()
    np.testing.assert_allclose(_run(_defined_elsewhere()), _expected(), rtol=1e-6)
    assert _compiles() == 1, "another file and line, the same program: a hit (as JAX by default)"
    config.update("jax_compilation_cache_include_metadata_in_key", True)
    # Locations hold the caller's frames too (as JAX's), so the repeated call is made from the same line.
    for repeat in range(2):
        _run(_defined_elsewhere())
        if repeat == 0:
            _run()
            assert _compiles() == 3, "with metadata in the key, the locations tell the modules apart"
    assert _compiles() == 3, "the same function called from the same place: a hit"


# --- misses ----------------------------------------------------------------------------------------------


def test_another_pipeline_or_compile_options_miss(cache):
    toolkit.jit(_fresh()).lower(X).compile()
    toolkit.jit(_fresh()).lower(X).compile(pipeline="cse")
    assert _compiles() == 2, "the pipeline's text is part of the key"
    compiled = toolkit.jit(_fresh()).lower(X).compile({"xla_cpu_enable_fast_math": True})
    assert _compiles() == 3, "compile options are part of the key"
    np.testing.assert_allclose(np.asarray(compiled(X)), _expected(), rtol=1e-5)
    toolkit.jit(_fresh()).lower(X).compile({"xla_cpu_enable_fast_math": True})
    assert _compiles() == 3
    assert len(cc.entries()) == 3


@pytest.mark.multidevice
def test_another_device_misses(cache):
    _run()
    on_device_1 = toolkit.device_put(X, toolkit.devices()[1])
    np.testing.assert_allclose(_run(_fresh(), on_device_1), _expected(), rtol=1e-6)
    assert _compiles() == 2


def test_another_jaxlib_version_platform_or_pass_registry_misses(cache, monkeypatch):
    _run()
    real = runtime_executable.runtime_versions
    monkeypatch.setattr(runtime_executable, "runtime_versions", lambda p: {**real(p), "jaxlib": "0.0.1"})
    _run()
    assert _compiles() == 2
    monkeypatch.setattr(runtime_executable, "runtime_versions", lambda p: {**real(p), "platform_version": "other"})
    _run()
    assert _compiles() == 3
    monkeypatch.setattr(runtime_executable, "runtime_versions", real)
    monkeypatch.setattr(cc, "registry_generation", lambda: 12345)
    _run()
    assert _compiles() == 4
    monkeypatch.setattr(runtime_executable, "devices_fingerprint", lambda devices: "count=2;other")
    _run()
    assert _compiles() == 5
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    _run()
    assert _compiles() == 6


# --- damaged entries ---------------------------------------------------------------------------------------


def _damage_and_rerun(path, damage) -> list[warnings.WarningMessage]:
    data = open(path, "rb").read()
    with open(path, "wb") as file:
        file.write(damage(data))
    before = _compiles()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    assert _compiles() == before + 1, "a damaged entry is compiled again"
    return [w for w in caught if issubclass(w.category, cc.CompilationCacheWarning)]


@pytest.mark.parametrize("damage, reason", [
    (lambda d: d[:-1] + bytes([d[-1] ^ 0x40]), "checksum"),
    (lambda d: d[: len(d) // 2], "truncated"),
    (lambda d: d[:20], "truncated"),
    (lambda d: b"", "truncated"),
    (lambda d: b"NOTCACHE" + d[8:], "not a toolkit cache entry"),
    (lambda d: d + b"\x00", "extended"),
], ids=["flipped-byte", "half", "inside-header", "empty", "magic", "extended"])
def test_a_damaged_entry_warns_once_recompiles_and_is_rewritten(cache, damage, reason):
    _run()
    path = _only_entry(cache)
    caught = _damage_and_rerun(path, damage)
    assert len(caught) == 1 and reason in str(caught[0].message) and path in str(caught[0].message)
    # Rewritten: the next fresh process (here: function) hits without a warning.
    before = _compiles()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    assert _compiles() == before


def test_an_entry_of_another_key_or_bytes_jaxlib_refuses_warn(cache):
    _run()
    path = _only_entry(cache)
    caught = _damage_and_rerun(path, lambda d: cc.encode_entry("some-other-key", d[80:], 1.0))
    assert len(caught) == 1 and "another key" in str(caught[0].message)
    key = os.path.basename(path)[:-len(cc.SUFFIX)]
    caught = _damage_and_rerun(path, lambda d: cc.encode_entry(key, b"not an executable", 1.0))
    assert len(caught) == 1 and "jaxlib cannot load" in str(caught[0].message)


def test_raise_persistent_cache_errors(cache):
    _run()
    path = _only_entry(cache)
    with open(path, "r+b") as file:
        file.truncate(100)
    config.update("jax_raise_persistent_cache_errors", True)
    with pytest.raises(cc.CompilationCacheError, match="truncated"):
        _run()


def test_unreadable_entry_and_unwritable_folder_warn_and_run(tmp_path):
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cc.set_cache_dir(blocker / "cache")  # its parent is a file: the folder cannot be made (even as root)
    with pytest.warns(cc.CompilationCacheWarning, match="cannot write"):
        np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    assert cc.statistics()["errors"] == 1 and cc.entries() == []
    cc.set_cache_dir(tmp_path / "cache")
    _run()
    path = _only_entry(tmp_path / "cache")
    os.unlink(path)
    os.mkdir(path)  # an entry that cannot be read as a file
    with pytest.warns(cc.CompilationCacheWarning, match="unreadable"):
        np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)


# --- writers, eviction, thresholds ------------------------------------------------------------------------------


def test_atomic_writes_readers_never_see_part_of_an_entry(tmp_path):
    path = str(tmp_path / ("k" + cc.SUFFIX))
    payloads = [bytes([i]) * (1 << 18) for i in (1, 2)]
    stop = threading.Event()
    errors: list[str] = []

    def write(payload: bytes) -> None:
        while not stop.is_set():
            cc.write_atomically(str(tmp_path), path, cc.encode_entry("k", payload, 1.0))

    def read() -> None:
        for _ in range(200):
            try:
                data = open(path, "rb").read()
            except FileNotFoundError:
                continue
            try:
                payload, _ = cc.decode_entry(data, "k")
                assert payload in payloads
            except Exception as error:  # noqa: BLE001 - collected for the assertion below
                errors.append(repr(error))
    writers = [threading.Thread(target=write, args=(p,)) for p in payloads]
    reader = threading.Thread(target=read)
    for t in (*writers, reader):
        t.start()
    reader.join(timeout=60)
    stop.set()
    for t in writers:
        t.join(timeout=60)
    assert errors == []
    assert [n for n in os.listdir(tmp_path) if n.endswith(".partial")] == []


def test_size_cap_evicts_the_least_recently_used(cache):
    _run(_fresh(1.0))
    (one,) = cc.entries()
    _run(_fresh(2.0))
    (two,) = [e for e in cc.entries() if e.path != one.path]
    # Both used a while ago, one first; then one is used again (a hit makes it the most recent).
    now = time.time()
    os.utime(one.path, (now - 100, now - 100))
    os.utime(two.path, (now - 50, now - 50))
    _run(_fresh(1.0))
    assert cc.statistics()["hits"] == 1
    cap = int(max(one.size, two.size) * 2.5)
    config.update("jax_compilation_cache_max_size", cap)
    _run(_fresh(3.0))
    assert cc.statistics()["evictions"] == 1 and cc.size() <= cap
    left = {e.path for e in cc.entries()}
    assert len(left) == 2 and one.path in left and two.path not in left, "the least recently used went"


def test_an_entry_larger_than_the_cap_is_not_written_and_a_cap_of_zero_disables(cache):
    config.update("jax_compilation_cache_max_size", 100)
    with pytest.warns(cc.CompilationCacheWarning, match="larger than jax_compilation_cache_max_size"):
        _run()
    assert cc.entries() == []
    config.update("jax_compilation_cache_max_size", 0)
    assert not cc.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run()
    assert cc.entries() == [] and cc.statistics()["misses"] == 1


def test_thresholds(cache):
    config.update("jax_persistent_cache_min_compile_time_secs", 1e6)
    _run()
    assert cc.entries() == [] and cc.statistics()["writes"] == 0
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    config.update("jax_persistent_cache_min_entry_size_bytes", 1 << 40)
    _run()
    assert cc.entries() == []
    config.update("jax_persistent_cache_min_entry_size_bytes", 1)
    _run()
    assert len(cc.entries()) == 1


def test_only_process_0_writes_and_never_host_callbacks(cache, monkeypatch):
    monkeypatch.setattr(cc.runtime_client, "process_index", lambda platform=None: 1)
    _run()
    assert cc.entries() == [] and cc.statistics()["misses"] == 1
    monkeypatch.undo()
    monkeypatch.setattr(cc.host_callbacks, "HOST_CALLBACK_TARGETS", (b"sine",))  # as if sin called back
    _run()
    assert cc.entries() == []
    monkeypatch.undo()
    _run()
    assert len(cc.entries()) == 1


def test_defaults_and_flag_names_are_jaxs():
    jax = pytest.importorskip("jax")
    definitions = [cc.CACHE_DIR, cc.ENABLE, cc.MIN_COMPILE_TIME, cc.MIN_ENTRY_SIZE, cc.MAX_SIZE, cc.INCLUDE_METADATA,
                   cc.RAISE_ERRORS]
    assert sorted(d.name for d in definitions) == sorted(_FLAGS)
    for definition in definitions:
        assert getattr(jax.config, definition.name) == definition.default, definition.name


def test_not_cached_while_dumping(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DUMP_IR_TO", str(tmp_path / "dump"))
    np.testing.assert_allclose(_run(), _expected(), rtol=1e-6)
    assert cc.entries() == [] and cc.statistics()["misses"] == 0


# --- the API and the flags ------------------------------------------------------------------------------------


def test_inspect_and_clear(cache):
    assert cc.is_enabled() and cc.cache_dir() == str(cache)
    assert cc.entries() == [] and cc.size() == 0 and cc.clear() == 0  # the folder does not exist yet
    _run(_fresh(1.0))
    _run(_fresh(2.0))
    found = cc.entries()
    assert len(found) == 2 and found[0].atime >= found[1].atime
    for entry in found:
        assert entry.key.startswith("jit_f-") and entry.path == os.path.join(cache, entry.key + cc.SUFFIX)
        assert entry.size == os.path.getsize(entry.path) and entry.compile_seconds is not None
        assert abs(entry.atime - time.time()) < 600
    assert cc.size() == sum(e.size for e in found)
    (cache / "not-ours.txt").write_text("kept")
    (cache / ".tmp-left-by-a-dead-writer.tkcache.partial").write_bytes(b"x")
    assert cc.clear() == 2
    assert cc.entries() == [] and cc.size() == 0 and sorted(os.listdir(cache)) == ["not-ours.txt"]
    cc.set_cache_dir(None)
    assert not cc.is_enabled() and cc.cache_dir() is None and cc.entries() == [] and cc.clear() == 0


def test_flags_through_config(tmp_path):
    toolkit.config.update("jax_compilation_cache_dir", tmp_path)
    assert cc.is_enabled() and toolkit.config.jax_compilation_cache_dir == str(tmp_path) == cc.cache_dir()
    config.update("jax_enable_compilation_cache", False)
    assert not cc.is_enabled()
    config.update("jax_enable_compilation_cache", True)
    assert cc.is_enabled()
    cc.set_cache_dir("")
    assert not cc.is_enabled()
    with pytest.raises(TypeError, match="jax_compilation_cache_dir"):
        config.update("jax_compilation_cache_dir", 3)
    with pytest.raises(TypeError, match="jax_compilation_cache_dir"):
        cc.set_cache_dir(b"/tmp/bytes")
    with pytest.raises(ValueError, match="jax_compilation_cache_max_size"):
        config.update("jax_compilation_cache_max_size", -2)
    with pytest.raises(ValueError, match="jax_compilation_cache_max_size"):
        config.update("jax_compilation_cache_max_size", 1.5)
    with pytest.raises(ValueError, match="jax_persistent_cache_min_compile_time_secs"):
        config.update("jax_persistent_cache_min_compile_time_secs", -1)
    with pytest.raises(ValueError, match="jax_persistent_cache_min_compile_time_secs"):
        config.update("jax_persistent_cache_min_compile_time_secs", "1")
    with pytest.raises(TypeError, match="jax_raise_persistent_cache_errors"):
        config.update("jax_raise_persistent_cache_errors", "yes")


def test_decode_entry_refuses_by_name():
    data = cc.encode_entry("k", b"payload", 2.5)
    assert cc.decode_entry(data, "k") == (b"payload", 2.5)
    with pytest.raises(ValueError, match="another key"):
        cc.decode_entry(data, "j")
    with pytest.raises(ValueError, match="checksum"):
        cc.decode_entry(data[:-1] + b"P", "k")


# --- fresh processes: env var, concurrent writers, 8 devices, an export's call, a LAPACK kernel ---------------

_CHILD = textwrap.dedent("""
    import json
    import sys
    import numpy as np
    import toolkit
    import toolkit.numpy as tnp
    from toolkit import export
    from toolkit.shard import NamedSharding, PartitionSpec as P

    def f(x, w):
        return tnp.tanh(x @ w) * 2.0

    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    w = np.linspace(1, 2, 32, dtype=np.float32).reshape(8, 4)
    single = toolkit.jit(f)(x, w)
    mesh = toolkit.make_mesh((8,), ("x",))
    sharded = toolkit.jit(f, in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))(x, w)
    blob = export.export(toolkit.jit(lambda v: tnp.sin(v) + 1.0))(x).serialize()
    called = export.deserialize(blob).call(x)
    # LAPACK's kernels are readied (scipy loaded) only for a program calling one, loaded or compiled.
    lapack_before = "scipy" in sys.modules
    factor = toolkit.jit(tnp.linalg.cholesky)(x.T @ x + 8 * np.eye(8, dtype=np.float32))
    print(json.dumps({"stats": toolkit.compilation_cache.statistics(), "single": np.asarray(single).tolist(),
                      "lapack_before": lapack_before, "factor": np.asarray(factor).tolist(),
                      "sharded": np.asarray(sharded).tolist(), "called": np.asarray(called).tolist(),
                      "devices": len(sharded.sharding.device_set)}))
""")


def _start_child(script, directory) -> subprocess.Popen:
    env = dict(os.environ, TOOLKIT_COMPILATION_CACHE_DIR=str(directory), TOOLKIT_NUM_CPU_DEVICES="8",
               TOOLKIT_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(process: subprocess.Popen) -> dict:
    try:
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    assert process.returncode == 0, err[-3000:]
    assert "CompilationCacheWarning" not in err, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_fresh_processes_concurrent_writers_then_a_hit_on_8_devices(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    directory = tmp_path / "cache"
    writers = [_start_child(script, directory) for _ in range(2)]  # two processes writing the same keys
    try:
        cold = [_finish(p) for p in writers]
    finally:
        for p in writers:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for result in cold:
        # Each compiled, or loaded what the other had written meanwhile (they race on purpose).
        assert result["stats"]["misses"] + result["stats"]["hits"] >= 4 and result["stats"]["errors"] == 0
        assert result["devices"] == 8
    assert [n for n in os.listdir(directory) if n.endswith(".partial")] == []
    warm = _finish(_start_child(script, directory))
    assert warm["stats"]["xla_compiles"] == 0 and warm["stats"]["hits"] >= 4 and warm["stats"]["errors"] == 0
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    w = np.linspace(1, 2, 32, dtype=np.float32).reshape(8, 4)
    expected = np.tanh(x @ w) * 2
    for result in (*cold, warm):
        np.testing.assert_allclose(result["single"], expected, rtol=1e-5)
        np.testing.assert_allclose(result["sharded"], expected, rtol=1e-5)
        np.testing.assert_allclose(result["called"], np.sin(x) + 1, rtol=1e-5)
        np.testing.assert_allclose(result["factor"], np.linalg.cholesky(x.T @ x + 8 * np.eye(8)), rtol=1e-4)
        assert not result["lapack_before"]
    assert warm["devices"] == 8
