"""Write JAX's public names per module to tests/data/jax_names.json (tests/test_api_coverage.py reads it).

The snapshot is committed so the coverage test never imports jax: run this script again only when the pinned
JAX version changes (``python scripts/snapshot_jax_names.py``), then give every new absent name a reason in
tests/data/absent_names.toml.

A module's public names are what ``dir(module)`` shows without a leading underscore, in a fresh interpreter that
ran only ``import <module>`` — what a user sees, independent of which other modules happen to be loaded.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

# The modules the coverage test compares (issue 23, item 5); each maps to toolkit's module of the same path.
MODULES = (
    "jax",
    "jax.numpy",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.lax",
    "jax.lax.linalg",
    "jax.random",
    "jax.nn",
    "jax.nn.initializers",
    "jax.tree",
    "jax.tree_util",
    "jax.flatten_util",
    "jax.scipy.special",
    "jax.scipy.stats",
    "jax.scipy.stats.norm",
    "jax.scipy.stats.logistic",
    "jax.scipy.linalg",
    "jax.scipy.fft",
    "jax.scipy.integrate",
    "jax.scipy.cluster.vq",
    "jax.scipy.signal",
    "jax.scipy.optimize",
    "jax.scipy.sparse.linalg",
    "jax.scipy.ndimage",
    "jax.scipy.interpolate",
    "jax.scipy.spatial.transform",
    "jax.image",
    "jax.debug",
    "jax.experimental",
    "jax.errors",
    "jax.dtypes",
    "jax.sharding",
    "jax.export",
    "jax.profiler",
    "jax.stages",
)

# Run in a child interpreter per module: prints {name: kind} for the module's public names.
_CHILD = r"""
import importlib, inspect, json, sys, types
mod = importlib.import_module(sys.argv[1])
out = {}
for name in sorted(dir(mod)):
    if name.startswith("_"):
        continue
    value = getattr(mod, name)
    if isinstance(value, types.ModuleType):
        kind = "module"
    elif inspect.isclass(value):
        kind = "class"
    elif callable(value):
        kind = "function"
    else:
        kind = "value"
    out[name] = kind
print(json.dumps(out))
"""


def snapshot(modules: tuple[str, ...]) -> dict[str, object]:
    """Return ``{"jax_version": ..., "modules": {module: {name: kind}}}`` for ``modules``."""
    import jax  # the script's only use of jax: its version string

    result: dict[str, dict[str, str]] = {}
    for module in modules:
        proc = subprocess.run([sys.executable, "-c", _CHILD, module], capture_output=True, text=True,
                              timeout=300, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"importing {module} failed:\n{proc.stderr}")
        result[module] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"jax_version": jax.__version__, "modules": result}


def main(argv: list[str] | None = None) -> int:
    """Write the snapshot (default tests/data/jax_names.json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "jax_names.json"
    parser.add_argument("--out", type=pathlib.Path, default=default)
    args = parser.parse_args(argv)
    data = snapshot(MODULES)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    counts = ", ".join(f"{m} {len(n)}" for m, n in data["modules"].items())  # type: ignore[union-attr]
    print(f"wrote {args.out} (jax {data['jax_version']}): {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
