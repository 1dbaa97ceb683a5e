"""``toolkit.compilation_cache``: a persistent compilation cache on disk, as JAX's ``jax_compilation_cache_dir``.

Turn it on with the environment variable ``TOOLKIT_COMPILATION_CACHE_DIR=/path`` (read at import),
``toolkit.config.update("jax_compilation_cache_dir", "/path")`` or :func:`set_cache_dir`. Every
XLA compilation ``jit`` makes (``jit(f)(x)``, ``Lowered.compile``, ``load_module(...).compile()``,
an ``Exported``'s calls, multi-device executables) then looks for its executable in the folder
before compiling, and writes what it compiles there — so a second process running the same
program loads executables instead of compiling them.

The flags, by JAX's names and with JAX's defaults; each also has an environment variable read
at start-up, ``TOOLKIT_`` + the name without ``jax_``, upper case (``TOOLKIT_COMPILATION_CACHE_DIR``):

=================================================  =======  =============================================
flag                                               default  meaning
=================================================  =======  =============================================
``jax_compilation_cache_dir``                      None     the folder; None: no persistent cache
``jax_enable_compilation_cache``                   True     False turns the cache off whatever the folder
``jax_persistent_cache_min_compile_time_secs``     1.0      compilations faster than this are not written
``jax_persistent_cache_min_entry_size_bytes``      0        entries smaller than this are not written
``jax_compilation_cache_max_size``                 -1       bytes; -1 no cap, 0 disables the cache
``jax_compilation_cache_include_metadata_in_key``  False    source locations part of the key
``jax_raise_persistent_cache_errors``              False    raise instead of warning on cache errors
=================================================  =======  =============================================

**The key** (SHA-256, as JAX's): the module XLA compiles (after the pass pipeline; its bytecode
without source locations unless ``jax_compilation_cache_include_metadata_in_key``), the pass
pipeline's text and the pass registry's generation, the compile options (partitions, replicas,
partitioner, XLA options, device assignment), the devices (platform, kinds, ids, process
indices and count, PJRT's topology fingerprint), jaxlib's version, the platform's version and
``XLA_FLAGS``. Keying on the module after the passes makes a pass whose code changed between
runs miss rather than load a stale executable.

**An entry** is one file ``<module name>-<key hex>.tkcache``: a 80-byte header (magic, the key's
digest, the payload's length, the compile time, and a SHA-256 over all of them and the payload)
then PJRT's serialized executable — no pickle. Reading checks all of it before jaxlib sees the
bytes; an entry that fails (truncated, corrupted, another key's, unreadable, or refused by
jaxlib) gives one :class:`CompilationCacheWarning` and is compiled again and rewritten — never a
crash or a wrong executable. As JAX's, only process 0 of a multi-process run writes, and
executables with host callbacks are never written. Writes go to a temporary file in the folder and ``os.replace`` it
into place, so processes sharing the folder see a whole entry or none, with no lock. A hit sets
the file's modification time to now: with ``jax_compilation_cache_max_size`` set, writing evicts
the least recently used entries (oldest modification time) until the folder fits.

As JAX's, the cache is trusted: loading an executable runs its code, so never share the folder
with anyone you would not let run code as you. The checksum guards against damage, not malice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import struct
import tempfile
import threading
import time
import warnings
from typing import Any, Callable, Mapping, Sequence

from jaxlib.mlir import ir, passmanager

from toolkit.core.config import FlagDefinition, config, define_flag, flag_value, parse_bool
from toolkit.passes.registry import registry_generation
from toolkit.runtime import client as runtime_client
from toolkit.runtime import executable as runtime_executable
from toolkit.runtime import host_callbacks

__all__ = ["CacheEntry", "CompilationCacheError", "CompilationCacheWarning", "cache_dir", "clear",
           "compile_cached", "entries", "is_enabled", "reset_statistics", "set_cache_dir", "size", "statistics"]

SUFFIX = ".tkcache"
MAGIC = b"TKCACHE\x01"  # format version 1
_HEADER = struct.Struct(">8s32sQd32s")  # magic, key digest, payload length, compile seconds, checksum
_TEMPORARY_PREFIX = ".tmp-"
_STALE_TEMPORARY_SECONDS = 3600.0  # a writer that died left it; live writers replace theirs within seconds


class CompilationCacheWarning(UserWarning):
    """A cache entry could not be read or written; the program compiled instead (nothing else changes)."""


class CompilationCacheError(RuntimeError):
    """A cache error, raised instead of warned about when ``jax_raise_persistent_cache_errors`` is on."""


# --- flags ----------------------------------------------------------------------------------------------


def _check_directory(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} takes a folder path (str or os.PathLike) or None, got {value!r}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{name} takes a text path, got bytes {value!r}")
    return text or None  # "" (an empty environment variable) means no cache


def _check_seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} takes a number of seconds >= 0, got {value!r}")
    return float(value)


def _check_bytes(lowest: int) -> Callable[[str, Any], int]:
    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            raise ValueError(f"{name} takes a whole number of bytes >= {lowest}, got {value!r}")
        return int(value)
    return check


def _parse_int(text: str) -> int:
    return int(text.strip())


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise TypeError(f"{name} takes a bool, got {value!r}")
    return bool(value)


CACHE_DIR = define_flag(FlagDefinition(
    "jax_compilation_cache_dir", None, environment="TOOLKIT_COMPILATION_CACHE_DIR",
    check=_check_directory, parse=str,
    help="The persistent compilation cache's folder (created when first written); None: no persistent cache."))
ENABLE = define_flag(FlagDefinition(
    "jax_enable_compilation_cache", True, environment="TOOLKIT_ENABLE_COMPILATION_CACHE",
    check=_check_bool, parse=parse_bool,
    help="False turns the persistent compilation cache off even with a folder set."))
MIN_COMPILE_TIME = define_flag(FlagDefinition(
    "jax_persistent_cache_min_compile_time_secs", 1.0,
    environment="TOOLKIT_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", check=_check_seconds, parse=float,
    help="Only compilations that took at least this many seconds are written to the cache."))
MIN_ENTRY_SIZE = define_flag(FlagDefinition(
    "jax_persistent_cache_min_entry_size_bytes", 0, environment="TOOLKIT_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
    check=_check_bytes(-1), parse=_parse_int,
    help="Only entries of at least this many bytes are written (0 and -1: any size)."))
MAX_SIZE = define_flag(FlagDefinition(
    "jax_compilation_cache_max_size", -1, environment="TOOLKIT_COMPILATION_CACHE_MAX_SIZE",
    check=_check_bytes(-1), parse=_parse_int,
    help="The cache folder's size cap in bytes: least recently used entries are evicted to fit; "
         "-1 no cap, 0 disables the cache."))
INCLUDE_METADATA = define_flag(FlagDefinition(
    "jax_compilation_cache_include_metadata_in_key", False,
    environment="TOOLKIT_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY", check=_check_bool, parse=parse_bool,
    help="Key on the module's source locations too (moving code then misses; loaded executables' "
         "op metadata is otherwise that of the run that wrote them)."))
RAISE_ERRORS = define_flag(FlagDefinition(
    "jax_raise_persistent_cache_errors", False, environment="TOOLKIT_RAISE_PERSISTENT_CACHE_ERRORS",
    check=_check_bool, parse=parse_bool,
    help="Raise CompilationCacheError on a cache read or write error instead of warning and compiling."))


# --- the public API ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """One cache file: its key, path, size in bytes, last use (seconds since the epoch) and compile time."""

    key: str
    path: str
    size: int
    atime: float
    compile_seconds: float | None  # None when the header cannot be read


def set_cache_dir(path: str | os.PathLike | None) -> None:
    """Use ``path`` as the cache folder from now on (``jax.experimental.compilation_cache.set_cache_dir``).

    ``None`` turns the cache off. Same as ``toolkit.config.update("jax_compilation_cache_dir", path)``.
    """
    config.update(CACHE_DIR.name, path)


def cache_dir() -> str | None:
    """The cache folder (``jax_compilation_cache_dir``), or None."""
    return flag_value(CACHE_DIR.name)


def is_enabled() -> bool:
    """True when compilations read and write the cache: a folder set, the cache enabled, its size cap not 0."""
    return _active_dir() is not None


def entries() -> list[CacheEntry]:
    """The folder's entries, most recently used first (empty without a folder or when it does not exist)."""
    directory = cache_dir()
    if directory is None:
        return []
    found = []
    for path, stat in _listing(directory):
        try:
            with open(path, "rb") as file:
                header = file.read(_HEADER.size)
            seconds: float | None = _HEADER.unpack(header)[3] if len(header) == _HEADER.size and \
                header[:len(MAGIC)] == MAGIC else None
        except OSError:
            seconds = None
        found.append(CacheEntry(os.path.basename(path)[:-len(SUFFIX)], path, stat.st_size, stat.st_mtime, seconds))
    found.sort(key=lambda e: e.atime, reverse=True)
    return found


def size() -> int:
    """The total size in bytes of the folder's entries (0 without a folder)."""
    directory = cache_dir()
    return 0 if directory is None else sum(stat.st_size for _, stat in _listing(directory))


def clear() -> int:
    """Delete every entry (and any writer's leftover temporary file) from the folder; the number of entries deleted.

    The folder itself stays. Files that are not the cache's are left alone.
    """
    directory = cache_dir()
    if directory is None:
        return 0
    removed = 0
    for path, _ in _listing(directory):
        removed += _unlink(path)
    _remove_temporaries(directory, older_than=0.0)
    return removed


_STATISTICS_NAMES = ("hits", "misses", "writes", "xla_compiles", "errors", "evictions")
_statistics = dict.fromkeys(_STATISTICS_NAMES, 0) | {"seconds_saved": 0.0}
_statistics_lock = threading.Lock()


def statistics() -> dict[str, float]:
    """Counts since start-up (or :func:`reset_statistics`) for this process.

    ``hits``/``misses`` (lookups with the cache on), ``writes``, ``xla_compiles`` (every XLA
    compilation ``jit`` made, cache on or off), ``errors`` (warned about), ``evictions``, and
    ``seconds_saved`` (the compile times recorded in the entries that hit).
    """
    with _statistics_lock:
        return dict(_statistics)


def reset_statistics() -> None:
    """Set every count of :func:`statistics` back to 0."""
    with _statistics_lock:
        for name in _statistics:
            _statistics[name] = 0


def _count(name: str, amount: float = 1) -> None:
    with _statistics_lock:
        _statistics[name] += amount


# --- compiling through the cache -------------------------------------------------------------------------


def compile_cached(module: ir.Module, bytecode: bytes, devices: Sequence[Any], *, pipeline_text: str = "",
                   num_partitions: int = 1, spmd: bool = False, use_shardy: bool = False,
                   compiler_options: Mapping[str, Any] | None = None,
                   propagate_output_shardings: Sequence[bool] | None = None,
                   dump_to: str | None = None) -> Any:
    """XLA's executable of ``module`` (whose bytecode is ``bytecode``) for ``devices``: from the cache, else compiled.

    The keyword arguments are ``toolkit.runtime.executable.compile_module``'s; ``pipeline_text``
    is the pass pipeline that made ``module`` (part of the key). With the cache off, or XLA
    dumping (``dump_to``: the dump needs XLA to run), this is ``compile_module``. Compile
    errors propagate unchanged; cache errors are warnings (:class:`CompilationCacheWarning`).
    """
    def compile_now() -> Any:
        _count("xla_compiles")
        return runtime_executable.compile_module(
            module, devices, num_partitions=num_partitions, spmd=spmd, use_shardy=use_shardy,
            compiler_options=compiler_options, propagate_output_shardings=propagate_output_shardings,
            dump_to=dump_to, serialized=bytecode)

    directory = _active_dir()
    if directory is None or dump_to is not None:
        return compile_now()
    # Outside the try below: a bad compiler option is the caller's error, as compile_module raises it.
    options = runtime_executable.compile_options(
        devices, num_partitions=num_partitions, spmd=spmd, use_shardy=use_shardy,
        compiler_options=compiler_options, propagate_output_shardings=propagate_output_shardings)
    try:
        key = cache_key(module, bytecode, devices, options, pipeline_text)
    except Exception as error:  # noqa: BLE001 - a key we cannot make only costs the cache
        _problem(f"cannot compute the compilation cache key ({type(error).__name__}: {error}); compiling")
        return compile_now()
    path = os.path.join(directory, key + SUFFIX)
    executable = _load(path, key, devices, options)
    if executable is not None:
        _count("hits")
        return executable
    _count("misses")
    start = time.perf_counter()
    executable = compile_now()
    # As JAX: only process 0 of a multi-process run writes (the others compile the same program and
    # would race on shared storage), and never an executable calling back into this process (a host
    # callback's address is in its code).
    if runtime_client.process_index(devices[0].platform) == 0 and not host_callbacks.calls_back(bytecode):
        _store(directory, path, key, executable, time.perf_counter() - start)
    return executable


def cache_key(module: ir.Module, bytecode: bytes, devices: Sequence[Any], options: Any,
              pipeline_text: str = "") -> str:
    """``<module name>-<SHA-256 hex>``: the entry name of ``module`` compiled with ``options`` for ``devices``.

    See the module docstring for what it covers.
    """
    digest = hashlib.sha256()

    def part(name: str, data: bytes) -> None:
        # Each part named and length-prefixed: no two different sequences of parts hash alike.
        digest.update(f"{name}:{len(data)}:".encode())
        digest.update(data)

    part("format", MAGIC)
    part("module", bytecode if flag_value(INCLUDE_METADATA.name) else _without_locations(module))
    part("pipeline", pipeline_text.encode())
    part("pass registry generation", str(registry_generation()).encode())
    part("compile options", runtime_executable.compile_options_fingerprint(options))
    part("devices", runtime_executable.devices_fingerprint(devices).encode())
    versions = runtime_executable.runtime_versions(devices[0].platform)
    part("versions", json.dumps(versions, sort_keys=True).encode())
    part("XLA_FLAGS", os.environ.get("XLA_FLAGS", "").encode())
    return f"{_module_name(module)}-{digest.hexdigest()}"


def _without_locations(module: ir.Module) -> bytes:
    """The module's bytecode with its source locations stripped (a copy; ``module`` is left alone)."""
    with module.context:
        clone = module.operation.clone()
        passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(clone)
        buffer = io.BytesIO()
        clone.write_bytecode(buffer)
    return buffer.getvalue()


def _module_name(module: ir.Module) -> str:
    attributes = module.operation.attributes
    name = ir.StringAttr(attributes["sym_name"]).value if "sym_name" in attributes else "module"
    return re.sub(r"[^A-Za-z0-9_.]", "_", name)[:64] or "module"


def _active_dir() -> str | None:
    directory = flag_value(CACHE_DIR.name)
    if directory is None or not flag_value(ENABLE.name) or flag_value(MAX_SIZE.name) == 0:
        return None
    return directory


def _problem(message: str) -> None:
    """Warn (once per call) that the cache failed, or raise under ``jax_raise_persistent_cache_errors``."""
    _count("errors")
    if flag_value(RAISE_ERRORS.name):
        raise CompilationCacheError(message)
    warnings.warn(message, CompilationCacheWarning, stacklevel=4)


# --- entries on disk ----------------------------------------------------------------------------------------


def encode_entry(key: str, payload: bytes, compile_seconds: float) -> bytes:
    """The file contents of an entry: the header (see the module docstring), then ``payload``."""
    key_digest = hashlib.sha256(key.encode()).digest()
    checksum = _checksum(key_digest, payload, compile_seconds)
    return _HEADER.pack(MAGIC, key_digest, len(payload), compile_seconds, checksum) + payload


def decode_entry(data: bytes, key: str) -> tuple[bytes, float]:
    """The payload and compile time of an entry's bytes; ``ValueError`` saying what is wrong with them."""
    if len(data) < _HEADER.size:
        raise ValueError(f"truncated: {len(data)} bytes, shorter than the {_HEADER.size}-byte header")
    magic, key_digest, length, seconds, checksum = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ValueError(f"not a toolkit cache entry of this format (starts {magic!r})")
    if key_digest != hashlib.sha256(key.encode()).digest():
        raise ValueError("the entry belongs to another key")
    payload = data[_HEADER.size:]
    if len(payload) != length:
        raise ValueError(f"truncated or extended: the executable has {len(payload)} bytes, the header says {length}")
    if _checksum(key_digest, payload, seconds) != checksum:
        raise ValueError("checksum mismatch (the file is corrupted)")
    return payload, seconds


def _checksum(key_digest: bytes, payload: bytes, seconds: float) -> bytes:
    digest = hashlib.sha256(MAGIC + key_digest + struct.pack(">Qd", len(payload), seconds))
    digest.update(payload)
    return digest.digest()


def _load(path: str, key: str, devices: Sequence[Any], options: Any) -> Any | None:
    """The executable in entry ``path``, or None (missing; or damaged, warned about once)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except (FileNotFoundError, NotADirectoryError):  # no entry, or no folder (its path may cross a file)
        return None
    except OSError as error:
        _problem(f"compilation cache entry {path} is unreadable ({error}); compiling instead")
        return None
    try:
        payload, seconds = decode_entry(data, key)
        executable = runtime_executable.deserialize_executable(payload, devices, options)
    except ValueError as error:
        _problem(f"compilation cache entry {path} is damaged ({error}); compiling again and rewriting it")
        return None
    _count("seconds_saved", seconds)
    try:
        os.utime(path)  # its last use, for least-recently-used eviction
    except OSError:
        pass  # a read-only cache still serves hits; only eviction order suffers
    return executable


def _store(directory: str, path: str, key: str, executable: Any, seconds: float) -> None:
    """Write ``executable``'s entry unless a threshold says no; warn (not raise) when the folder refuses."""
    if seconds < flag_value(MIN_COMPILE_TIME.name):
        return
    try:
        payload = runtime_executable.serialize_executable(executable)
    except Exception as error:  # noqa: BLE001 - jaxlib raises its own error types; the executable still runs
        _problem(f"cannot serialize the executable for the compilation cache ({error})")
        return
    data = encode_entry(key, payload, seconds)
    if len(data) < flag_value(MIN_ENTRY_SIZE.name):
        return
    cap = flag_value(MAX_SIZE.name)
    if 0 < cap < len(data):
        _problem(f"compilation cache entry {key} ({len(data)} bytes) is larger than "
                 f"jax_compilation_cache_max_size ({cap} bytes); not written")
        return
    try:
        write_atomically(directory, path, data)
    except OSError as error:
        _problem(f"cannot write the compilation cache entry in {directory} ({error}); continuing without it")
        return
    _count("writes")
    if cap > 0:
        _evict(directory, cap, keep=path)


def write_atomically(directory: str, path: str, data: bytes) -> None:
    """Make ``path`` (in ``directory``, created if missing) hold ``data``: readers see all of it or the old file.

    A temporary file in the same folder, then ``os.replace`` (atomic on POSIX and Windows);
    two processes writing one path leave one whole file. ``OSError`` when the folder refuses.
    """
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=_TEMPORARY_PREFIX, suffix=SUFFIX + ".partial")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        _unlink(temporary)
        raise


def _evict(directory: str, cap: int, keep: str) -> None:
    """Delete the least recently used entries until the folder's entries fit in ``cap`` bytes.

    Lock-free: another process may delete the same file first (then it no longer counts) or
    write meanwhile (the folder may exceed the cap until the next write evicts again).
    """
    listing = sorted(_listing(directory), key=lambda item: item[1].st_mtime)
    total = sum(stat.st_size for _, stat in listing)
    for path, stat in listing:
        if total <= cap:
            break
        if path == keep:
            continue
        if _unlink(path):
            _count("evictions")
        total -= stat.st_size
    _remove_temporaries(directory, older_than=_STALE_TEMPORARY_SECONDS)


def _listing(directory: str) -> list[tuple[str, os.stat_result]]:
    """The entries' paths and stats (files vanishing meanwhile are skipped; a missing folder is empty)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith(SUFFIX) or name.startswith(_TEMPORARY_PREFIX):
            continue
        path = os.path.join(directory, name)
        try:
            found.append((path, os.stat(path)))
        except OSError:
            continue
    return found


def _remove_temporaries(directory: str, older_than: float) -> None:
    now = time.time()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(_TEMPORARY_PREFIX) and name.endswith(".partial"):
            path = os.path.join(directory, name)
            try:
                if now - os.stat(path).st_mtime >= older_than:
                    os.unlink(path)
            except OSError:
                continue


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
        return 1
    except OSError:
        return 0
