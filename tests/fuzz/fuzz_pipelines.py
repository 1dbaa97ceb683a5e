"""Random pass pipelines: registered passes in random order with random valid options.

The passes and their options come from ``toolkit.passes.list_passes()``
(Python passes declare typed options; C++ options are read from jaxlib's
printout with their defaults, whose text tells the type). Values are valid
for the option's type; string options get a few values that mean something
to the pass. Passes that would write files are kept on their defaults.
"""

from __future__ import annotations

import functools
from typing import Any

# Values for string options, by (pass, option); options not listed keep their default.
STRING_VALUES: dict[tuple[str, str], list[str]] = {
    ("toolkit-bind-shapes", "types"): ["tensor<4xf32>", "tensor<2x3xf32>,tensor<3xi32>", "tensor<i32>",
                                       "tensor<5x4xf32>", "tensor<8xf32>,tensor<8xf32>"],
    ("toolkit-platform-specialize", "platform"): ["cpu", "cuda", "rocm", "tpu"],
    ("toolkit-platform-specialize", "platforms"): ["cpu,cuda", "cpu,cuda,rocm", "cpu"],
    ("toolkit-sharding-annotate", "mesh"): ['"x=2,y=4"', '"x=8"', '"x=1"'],
    ("toolkit-sharding-annotate", "in-specs"): ['"[x]"', '"[x];[None,y]"', '"P(x);;[(y,x),?]"', '""'],
    ("toolkit-sharding-annotate", "out-specs"): ['"[x,y]"', '"[x]"', '""'],
    ("toolkit-checks-to-results", "function"): ["main", "f"],
    ("toolkit-inputs-to-arguments", "function"): ["main"],
    ("stablehlo-compatibility-expander", "target"): ["1.0.0", "1.15.0", "current"],
    ("vhlo-to-version", "target"): ["1.0.0", "1.15.0", "current", "0.9.0"],
    ("inline", "default-pipeline"): ["canonicalize", "''", "cse"],
    ("canonicalize", "region-simplify"): ["disabled", "normal", "aggressive"],
}
# Options never changed: they name files to write.
FIXED = {("toolkit-op-stats", "output"), ("toolkit-sharding-report", "output")}
# Passes that, applied anywhere, may reasonably fail with a clean error; they are fuzzed like the others.
NESTABLE_CXX = ["cse", "canonicalize", "sccp", "loop-invariant-code-motion", "strip-debuginfo"]


@functools.lru_cache(maxsize=None)
def passes() -> tuple[Any, ...]:
    from toolkit.passes import list_passes
    from toolkit.passes.registry import lookup_python_pass

    def toolkit_pass(info: Any) -> bool:
        # Test files register passes of their own (test-diag-chatty, ...) when pytest collects them;
        # the worker process does not know those.
        if info.kind != "python":
            return True
        cls = lookup_python_pass(info.name)
        return cls is not None and cls.__module__.startswith("toolkit.")

    return tuple(info for info in list_passes() if "cannot load" not in info.description and toolkit_pass(info))


def _option_value(pass_name: str, option: str, type_text: str, default: str, rng: Any) -> str | None:
    if (pass_name, option) in FIXED:
        return None
    if (pass_name, option) in STRING_VALUES:
        return rng.choice(STRING_VALUES[(pass_name, option)])
    if type_text == "bool" or default in ("true", "false"):
        return rng.choice(["true", "false"])
    if "|" in type_text:
        return rng.choice(type_text.split("|"))
    if type_text == "int" or default.lstrip("-").isdigit():
        if option in ("max-iterations", "inlining-threshold", "max-num-rewrites"):
            return str(rng.choice([1, 2, 10, -1 if option == "max-num-rewrites" else 3]))
        if option == "index":
            return str(rng.choice([-1, 0, 1]))
        if option == "version":
            return str(rng.choice([0, 1]))
        return None
    return None


def random_element(rng: Any, exclude: frozenset[str] | set[str] = frozenset()) -> str:
    """One pipeline element: a pass with a random subset of its options, sometimes nested in func.func."""
    info = rng.choice([p for p in passes() if p.name not in exclude])
    options = []
    for option, type_text, default, _ in info.options:
        if rng.random() < 0.5:
            value = _option_value(info.name, option, type_text, str(default), rng)
            if value is not None:
                options.append(f"{option}={value}")
    text = info.name + ("{" + " ".join(options) + "}" if options else "")
    if rng.random() < 0.15:
        inner = rng.choice(NESTABLE_CXX + ["toolkit-simplify"])
        return f"func.func({inner})"
    return text


def random_pipeline(rng: Any, exclude: frozenset[str] | set[str] = frozenset()) -> str:
    elements = [random_element(rng, exclude) for _ in range(rng.choice([1, 2, 3, 4, 6]))]
    return "builtin.module(" + ", ".join(elements) + ")"


def check_pipeline_answer(pipeline: str, answer: dict) -> str | None:
    """None when the run is acceptable, else why not.

    Acceptable: the pipeline ran and the module verifies; or it failed with a
    ``PipelineError`` that names the failing element of the pipeline.
    """
    status = answer["status"]
    if status in ("ok", "skip"):
        return None
    if status == "pipeline-error":
        message = answer["message"]
        import re

        named = re.findall(r"pass '([^']*)'", message) or re.findall(r"after pass '([^']*)'", message)
        if not named:
            return f"the pipeline error does not name a pass: {message[:500]}"
        if not any(n and n != "<pipeline>" and n.split("{")[0].split("(")[-1] in pipeline for n in named):
            return f"the pipeline error names {named}, not a pass of {pipeline}: {message[:500]}"
        return None
    return f"{status}: {answer.get('message', '')[:3000]}\n{answer.get('traceback', '')[-3000:]}"
