"""The zoo: real programs to try passes on, with their inputs made from a seed.

Each program is a ``<name>.json`` beside this file (what it is, where it came
from, its flat input specs and a checksum of its outputs for seed 0 computed by
JAX when it was made) and, for programs written with JAX and its libraries, a
``<name>.bin``: the ``jax.export`` serialized bytes written by
``scripts/make_zoo.py``. Programs written with toolkit (``frontend ==
"toolkit"``) are exported by toolkit when first asked for
(:mod:`toolkit.lab.zoo.toolkit_models`). Weights are arguments of the exported
function, made here from the seed, so the artifacts stay small and loading needs
no jax.

Example::

    from toolkit.lab import zoo
    program = zoo.get("mlp_mixer")
    outputs = program.exported().call(*program.inputs(seed=0))
    assert not program.checksum_mismatches(outputs)

See ``README.md`` beside this file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

from toolkit import export as _export
from toolkit.lab.loading import load_module
from toolkit.lab.zoo import toolkit_models

if TYPE_CHECKING:
    from toolkit.stages import Lowered

__all__ = ["FRONTENDS", "INPUT_KINDS", "InputSpec", "ZooProgram", "checksum", "get", "make_input", "programs",
           "tolerances"]

ZOO_DIR = pathlib.Path(__file__).resolve().parent

#: Where a program's code came from.
FRONTENDS = ("flax", "equinox", "jax", "toolkit")
#: What a flat input is: parameters or optimizer state, real-valued data, integer indices (positions, tokens,
#: steps: anything used to index), class labels.
INPUT_KINDS = ("weight", "data", "index", "label")
#: How an input is made from the seed (``InputSpec.init["type"]``).
INIT_TYPES = ("normal", "uniform", "zeros", "ones", "randint", "bernoulli")
#: How many leading values of each output a checksum keeps.
CHECKSUM_HEAD = 4


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One flat argument of a zoo program.

    ``shape`` holds ints and, for a shape-polymorphic program, dimension names
    (``"b"``); ``init`` says how the value is made from the seed (``{"type":
    "normal", "scale": s}``, ``"uniform"`` with ``low``/``high``, ``"zeros"``,
    ``"ones"``, ``"randint"``, ``"bernoulli"`` with ``p``); ``range`` is the
    half-open ``[low, high)`` of an integer input.
    """

    name: str
    shape: tuple[int | str, ...]
    dtype: str
    kind: str
    init: Mapping[str, Any]
    range: tuple[int, int] | None = None

    def concrete_shape(self, dims: Mapping[str, int]) -> tuple[int, ...]:
        """The shape with every dimension name replaced by its size in ``dims`` (KeyError naming a missing one)."""
        out = []
        for d in self.shape:
            if isinstance(d, str):
                if d not in dims:
                    raise KeyError(f"input {self.name!r} has dimension {d!r}: give its size in dims")
                out.append(int(dims[d]))
            else:
                out.append(d)
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        """The JSON record of this spec (what ``scripts/make_zoo.py`` writes)."""
        record: dict[str, Any] = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype,
                                  "kind": self.kind, "init": dict(self.init)}
        if self.range is not None:
            record["range"] = list(self.range)
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> InputSpec:
        """Read and check one spec record; ValueError naming what is wrong."""
        try:
            spec = cls(name=str(record["name"]), shape=tuple(record["shape"]), dtype=str(record["dtype"]),
                       kind=str(record["kind"]), init=dict(record["init"]),
                       range=tuple(record["range"]) if record.get("range") is not None else None)  # type: ignore
        except KeyError as e:
            raise ValueError(f"zoo input spec {record!r} lacks the field {e.args[0]!r}") from None
        spec.validate()
        return spec

    def validate(self) -> None:
        """Check the spec is one :func:`make_input` can make; ValueError naming the first problem."""
        where = f"zoo input {self.name!r}"
        if self.kind not in INPUT_KINDS:
            raise ValueError(f"{where}: kind {self.kind!r} is not one of {INPUT_KINDS}")
        for d in self.shape:
            if not (isinstance(d, str) and d.isidentifier()) and not (isinstance(d, int) and d >= 0):
                raise ValueError(f"{where}: dimension {d!r} is neither a size nor a dimension name")
        dtype = _dtype(self.dtype, where)
        init = self.init.get("type")
        if init not in INIT_TYPES:
            raise ValueError(f"{where}: init type {init!r} is not one of {INIT_TYPES}")
        integer = np.issubdtype(dtype, np.integer)
        if self.kind in ("index", "label") and not integer:
            raise ValueError(f"{where}: an {self.kind} input must have an integer dtype, not {self.dtype}")
        makes = {"randint": integer, "bernoulli": dtype == np.bool_, "zeros": True, "ones": True}
        if not makes.get(init, np.issubdtype(dtype, np.inexact)):
            raise ValueError(f"{where}: init {init!r} does not make {self.dtype} values")
        if init == "randint":
            if self.range is None or len(self.range) != 2 or not self.range[0] < self.range[1]:
                raise ValueError(f"{where}: an integer input needs range [low, high) with low < high")
            info = np.iinfo(dtype)
            if self.range[0] < info.min or self.range[1] - 1 > info.max:
                raise ValueError(f"{where}: range {self.range} does not fit {self.dtype}")


def _dtype(name: str, where: str) -> np.dtype:
    try:
        return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)
    except TypeError:
        raise ValueError(f"{where}: unknown dtype {name!r}") from None


def make_input(spec: InputSpec, index: int, *, seed: int = 0, dims: Mapping[str, int] | None = None) -> np.ndarray:
    """The value of input number ``index`` made from ``seed`` as ``spec.init`` says (deterministic).

    Each input has its own random stream (``numpy.random.default_rng([seed,
    index])``), so one input's value does not depend on the others' shapes.
    Real values are drawn in float64 and then cast to the dtype.
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, not {seed!r}")
    shape = spec.concrete_shape(dims or {})
    dtype = _dtype(spec.dtype, f"zoo input {spec.name!r}")
    rng = np.random.default_rng([int(seed), index])
    kind = spec.init["type"]
    if kind == "zeros":
        return np.zeros(shape, dtype)
    if kind == "ones":
        return np.ones(shape, dtype)
    if kind == "normal":
        return (rng.standard_normal(shape) * float(spec.init.get("scale", 1.0))).astype(dtype)
    if kind == "uniform":
        return rng.uniform(float(spec.init.get("low", 0.0)), float(spec.init.get("high", 1.0)), shape).astype(dtype)
    if kind == "bernoulli":
        return rng.random(shape) < float(spec.init.get("p", 0.5))
    if kind == "randint":
        assert spec.range is not None  # validate() checked it
        return rng.integers(spec.range[0], spec.range[1], shape).astype(dtype)
    raise ValueError(f"zoo input {spec.name!r}: init type {kind!r} is not one of {INIT_TYPES}")


def tolerances(dtype: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for comparing outputs of ``dtype`` (zeros for integers and bools: equal exactly)."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return 2e-2, 1e-2
    if dtype == np.float16:
        return 2e-3, 1e-3
    if dtype == np.float64:
        return 1e-9, 1e-12
    if np.issubdtype(dtype, np.inexact):
        return 2e-4, 1e-5
    return 0.0, 0.0


def checksum(outputs: Sequence[Any]) -> list[dict[str, Any]]:
    """A small record of each output: shape, dtype, sum, sum of absolute values and the first values.

    (Sums in float64; the records ``scripts/make_zoo.py`` writes from JAX's
    results and :meth:`ZooProgram.checksum_mismatches` compares against.)
    """
    records = []
    for out in outputs:
        a = np.asarray(out)
        wide = a.astype(np.float64) if a.dtype != np.bool_ else a.astype(np.int64)
        records.append({"shape": list(a.shape), "dtype": str(a.dtype), "sum": float(wide.sum()),
                        "abs_sum": float(np.abs(wide).sum()),
                        "first": [float(v) for v in wide.reshape(-1)[:CHECKSUM_HEAD]]})
    return records


@dataclasses.dataclass(frozen=True, eq=False)
class ZooProgram:
    """One zoo program: its description, input specs and recorded output checksums (read from its JSON).

    ``frontend`` is ``"flax"``, ``"equinox"``, ``"jax"`` (JAX with Optax
    only) or ``"toolkit"``; ``num_devices`` is the device count it was exported
    for; ``polymorphic`` says some input dimensions are names (sizes chosen by
    ``dims``, defaults in ``default_dims``).
    """

    name: str
    description: str
    frontend: str
    num_devices: int
    polymorphic: bool
    input_specs: tuple[InputSpec, ...]
    outputs: tuple[Mapping[str, Any], ...]
    default_dims: Mapping[str, int]
    metadata: Mapping[str, Any]

    def exported(self) -> _export.Exported:
        """The program as a :class:`toolkit.export.Exported` (read from its ``.bin``, or exported by toolkit)."""
        return _exported(self.name)

    def module_text(self) -> str:
        """The StableHLO module (``@main`` takes the flat inputs, in :attr:`input_specs` order)."""
        return self.exported().mlir_module()

    def inputs(self, seed: int = 0, *, dims: Mapping[str, int] | None = None) -> list[np.ndarray]:
        """The flat arguments made from ``seed``; ``dims`` sizes the named dimensions (default ``default_dims``)."""
        sizes = dict(self.default_dims)
        if dims:
            unknown = set(dims) - set(self.default_dims)
            if unknown:
                raise ValueError(f"zoo program {self.name!r} has no dimension named {sorted(unknown)}; "
                                 f"its dimensions: {sorted(self.default_dims)}")
            for d, size in dims.items():
                if not isinstance(size, (int, np.integer)) or size < 1:
                    raise ValueError(f"dimension {d!r} must be a positive int, not {size!r}")
            sizes.update(dims)
        return [make_input(spec, i, seed=seed, dims=sizes) for i, spec in enumerate(self.input_specs)]

    def load(self) -> Lowered:
        """The program as a :class:`toolkit.stages.Lowered` (``toolkit.lab.loading.load_module`` of :meth:`exported`).

        ``.compile(pipeline=...)`` then runs a pipeline on it; a polymorphic
        program is refined for the arguments its ``Compiled`` is called with.
        """
        return load_module(self.exported(), name=self.name)

    def checksum_mismatches(self, outputs: Sequence[Any], *, rtol: float | None = None,
                            atol: float | None = None) -> list[str]:
        """How ``outputs`` (for seed 0 and the default dims) differ from JAX's recorded ones; empty when they agree.

        Sums are compared within ``rtol * abs_sum + atol`` and the first values
        within ``rtol * |value| + atol``; the tolerances default by dtype
        (:func:`tolerances`), integers and bools must be equal.
        """
        outputs = list(outputs)
        if len(outputs) != len(self.outputs):
            return [f"{self.name}: {len(outputs)} outputs, expected {len(self.outputs)}"]
        problems = []
        for i, (got, want) in zip(range(len(outputs)), zip(checksum(outputs), self.outputs)):
            label = f"{self.name}: output {i} ({want.get('name', '?')})"
            if got["shape"] != want["shape"] or got["dtype"] != want["dtype"]:
                problems.append(f"{label}: {got['dtype']}{got['shape']}, expected {want['dtype']}{want['shape']}")
                continue
            r, a = tolerances(want["dtype"])
            r = r if rtol is None else rtol
            a = a if atol is None else atol
            if not math.isclose(got["sum"], want["sum"], rel_tol=0, abs_tol=r * want["abs_sum"] + a) and not (
                    math.isnan(got["sum"]) and math.isnan(want["sum"])):
                problems.append(f"{label}: sum {got['sum']!r}, expected {want['sum']!r}")
            for j, (g, w) in enumerate(zip(got["first"], want["first"])):
                if not math.isclose(g, w, rel_tol=r, abs_tol=a) and not (math.isnan(g) and math.isnan(w)):
                    problems.append(f"{label}: value {j} is {g!r}, expected {w!r}")
        return problems


def _read(path: pathlib.Path) -> ZooProgram:
    record = json.loads(path.read_text())
    try:
        program = ZooProgram(
            name=record["name"], description=record["description"], frontend=record["frontend"],
            num_devices=int(record["num_devices"]), polymorphic=bool(record["polymorphic"]),
            input_specs=tuple(InputSpec.from_json(r) for r in record["inputs"]),
            outputs=tuple(record["outputs"]), default_dims=dict(record.get("default_dims", {})),
            metadata={k: v for k, v in record.items()
                      if k not in ("name", "description", "frontend", "num_devices", "polymorphic", "inputs",
                                   "outputs", "default_dims")})
    except KeyError as e:
        raise ValueError(f"zoo program {path.name} lacks the field {e.args[0]!r}") from None
    if program.frontend not in FRONTENDS:
        raise ValueError(f"zoo program {path.name}: frontend {program.frontend!r} is not one of {FRONTENDS}")
    if program.name != path.stem:
        raise ValueError(f"zoo program {path.name} is named {program.name!r}")
    return program


@functools.cache
def _programs() -> dict[str, ZooProgram]:
    return {p.stem: _read(p) for p in sorted(ZOO_DIR.glob("*.json"))}


def programs() -> list[ZooProgram]:
    """Every zoo program, by name."""
    return list(_programs().values())


def get(name: str) -> ZooProgram:
    """The zoo program called ``name``; KeyError listing the names there are."""
    try:
        return _programs()[name]
    except KeyError:
        raise KeyError(f"no zoo program {name!r}; there are: {', '.join(_programs())}") from None


@functools.cache
def _exported(name: str) -> _export.Exported:
    program = get(name)
    if program.frontend == "toolkit":
        return toolkit_models.export_program(program.metadata["builder"], program.input_specs, program.default_dims,
                                             [o["name"] for o in program.outputs])
    return _export.deserialize(bytearray((ZOO_DIR / f"{name}.bin").read_bytes()))
