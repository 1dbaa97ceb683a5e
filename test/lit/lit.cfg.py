# lit configuration for toolkit's golden tests: `lit -v test/lit`.
#
# Substitutions: %PYTHON / %python (this interpreter), toolkit-opt, toolkit-run,
# filecheck (the pip `filecheck` command), %corpora (../shared/corpora),
# %inputs (test/lit/Inputs). Every subfolder is searched for .mlir and .py tests.
#
# Features: `jax` (the oracle is installed) and `shared-corpora` (../shared/corpora
# exists); a test that needs one says `REQUIRES: ...` and is skipped (UNSUPPORTED)
# in a clone without it instead of failing.

import os
import shutil
import sys

import lit.formats

config.name = "toolkit"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.local.cfg", "Inputs", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)

project_root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
python = sys.executable
bin_dir = os.path.dirname(python)

config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in [project_root, os.environ.get("PYTHONPATH", "")] if p)
config.environment["TF_CPP_MIN_LOG_LEVEL"] = "1"
for name in ("HOME", "TMPDIR", "TOOLKIT_NUM_CPU_DEVICES"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
# XLA's cheapest CPU code generation, as in the pytest run (the root conftest.py says why: most of a test's time is
# XLA compiling; the semantics are kept), unless XLA_FLAGS names either flag already.
xla_flags = os.environ.get("XLA_FLAGS", "")
for flag, value in (("xla_backend_optimization_level", "0"), ("xla_cpu_use_fusion_emitters", "false")):
    if flag not in xla_flags:
        xla_flags = (xla_flags + f" --{flag}={value}").strip()
config.environment["XLA_FLAGS"] = xla_flags


def _tool(name, module):
    found = shutil.which(name, path=bin_dir)
    return found if found else f"{python} -m {module}"


filecheck = shutil.which("filecheck", path=bin_dir) or shutil.which("filecheck") or "filecheck"

# Longest names first so `toolkit-opt` is not replaced inside a longer word.
config.substitutions.append(("%PYTHON", python))
config.substitutions.append(("%python", python))
corpora = os.path.join(project_root, "..", "shared", "corpora")
config.substitutions.append(("%corpora", corpora))
if os.path.isdir(corpora):
    config.available_features.add("shared-corpora")
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append((r"\btoolkit-opt\b", _tool("toolkit-opt", "toolkit.tools.opt")))
config.substitutions.append((r"\btoolkit-run\b", _tool("toolkit-run", "toolkit.tools.run")))
config.substitutions.append((r"\bfilecheck\b", filecheck))

try:
    import jax  # noqa: F401

    config.available_features.add("jax")
except ImportError:
    pass
