"""Can a consumer of given versions read an export? ``check_compat(exp, "cc=9,stablehlo=1.8.0")``.

A consumer is described by the calling conventions it reads (``cc=9``:
versions up to 9; ``cc=9..10``: that range; JAX 0.10.2 reads 9..10, an
``XlaCallModule`` built for version N reads 4..N) and the newest StableHLO
portable-artifact version it reads (``stablehlo=1.8.0``). The report says
whether the artifact is readable as it is and, if not, why (each reason
names the field or feature), and whether :func:`toolkit.export.convert.convert`
can make it readable — computed by doing that conversion, so the answer
always agrees with what ``convert`` can do; when it cannot, the
conversion's error names the blocking feature.

Example::

    report = check_compat(exp, "cc=9,stablehlo=1.8.0")
    report.readable, report.problems, report.convertible, report.conversion
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from toolkit.export.convert import (
    CONVERTIBLE_CALLING_CONVENTIONS,
    FIRST_VERSION_WITH_EFFECTS,
    FIRST_VERSION_WITH_SHARDY,
    ConversionError,
    _as_exported,
    artifact_version,
    convert,
    has_shardy,
    parse_version,
    read_module,
)
from toolkit.export.exported import Exported

#: The oldest calling convention an ``XlaCallModule`` consumer reads (``kVersionMinimumSupported``).
XLA_CALL_MODULE_MINIMUM = 4


@dataclasses.dataclass(frozen=True)
class Consumer:
    """What a consumer reads: calling conventions ``cc_min..cc_max`` and StableHLO up to ``stablehlo``."""

    cc_max: int | None = None
    cc_min: int = XLA_CALL_MODULE_MINIMUM
    stablehlo: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.cc_max is not None:
            parts.append(f"cc={self.cc_min}..{self.cc_max}")
        if self.stablehlo is not None:
            parts.append(f"stablehlo={self.stablehlo}")
        return ",".join(parts) or "any"


def parse_consumer(text: str) -> Consumer:
    """``"cc=9,stablehlo=1.8.0"`` (also ``calling_convention=``, ``cc=9..10``); ``ValueError`` otherwise."""
    cc_max: int | None = None
    cc_min = XLA_CALL_MODULE_MINIMUM
    target: str | None = None
    for part in [p for p in str(text).split(",") if p.strip()]:
        if "=" not in part:
            raise ValueError(f"{part.strip()!r} is not KEY=VALUE (keys: cc, stablehlo)")
        key, value = (s.strip() for s in part.split("=", 1))
        if key in ("cc", "calling_convention", "calling-convention"):
            match = re.fullmatch(r"(\d+)(?:\.\.(\d+))?", value)
            if not match:
                raise ValueError(f"cc={value!r}: write a version (cc=9) or a range (cc=9..10)")
            if match.group(2) is None:
                cc_max = int(match.group(1))
            else:
                cc_min, cc_max = int(match.group(1)), int(match.group(2))
                if cc_min > cc_max:
                    raise ValueError(f"cc={value}: empty range")
        elif key == "stablehlo":
            parse_version(value)
            target = value
        else:
            raise ValueError(f"unknown consumer key {key!r} (keys: cc, stablehlo)")
    if cc_max is None and target is None:
        raise ValueError("describe the consumer with cc=N and/or stablehlo=X.Y.Z")
    return Consumer(cc_max, cc_min, target)


@dataclasses.dataclass
class CompatReport:
    """The answer of :func:`check_compat`."""

    consumer: Consumer
    readable: bool
    problems: list[str]
    convertible: bool
    conversion: dict[str, Any]
    blocking: str | None = None
    blocking_feature: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"consumer": str(self.consumer), "readable": self.readable, "problems": list(self.problems),
                "convertible": self.convertible, "conversion": dict(self.conversion),
                "blocking": self.blocking, "blocking_feature": self.blocking_feature}

    def lines(self) -> list[str]:
        out = [f"consumer: {self.consumer}"]
        if self.readable:
            out.append("readable: yes")
            return out
        out.append("readable: no")
        out += [f"  - {p}" for p in self.problems]
        if self.convertible:
            flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in self.conversion.items())
            out.append(f"convertible: yes (toolkit export convert BLOB {flags} -o OUT)")
        else:
            out.append(f"convertible: no: {self.blocking}")
        return out


def _problems(exp: Exported, consumer: Consumer, module: Any) -> list[str]:
    problems = []
    version = exp.calling_convention_version
    if consumer.cc_max is not None:
        if version > consumer.cc_max:
            problems.append(f"calling_convention_version is {version}; the consumer reads up to {consumer.cc_max}")
        elif version < consumer.cc_min:
            problems.append(f"calling_convention_version is {version}; the consumer reads {consumer.cc_min} and up")
        if consumer.cc_max < FIRST_VERSION_WITH_SHARDY:
            shardy = has_shardy(module)
            if shardy is not None:
                problems.append(f"the module has Shardy shardings ({shardy}), which need calling convention "
                                f"{FIRST_VERSION_WITH_SHARDY}")
        if consumer.cc_max < FIRST_VERSION_WITH_EFFECTS and exp.ordered_effects:
            problems.append(f"ordered effects need calling convention {FIRST_VERSION_WITH_EFFECTS} (effect tokens)")
    if consumer.stablehlo is not None:
        have = artifact_version(exp.mlir_module_serialized)
        if have is None:
            problems.append("the artifact's StableHLO version is unknown (no producer string)")
        elif parse_version(have) > parse_version(consumer.stablehlo):
            problems.append(f"the portable artifact is StableHLO {have}; the consumer reads up to "
                            f"{consumer.stablehlo}")
    return problems


def check_compat(exported_or_bytes: Any, consumer: Consumer | str) -> CompatReport:
    """Whether ``consumer`` reads the export as it is, why not, and whether ``convert`` can fix it."""
    if isinstance(consumer, str):
        consumer = parse_consumer(consumer)
    exp = _as_exported(exported_or_bytes)
    module = read_module(exp)
    problems = _problems(exp, consumer, module)
    if not problems:
        return CompatReport(consumer, True, [], True, {})
    conversion: dict[str, Any] = {}
    version = exp.calling_convention_version
    if consumer.cc_max is not None and not consumer.cc_min <= version <= consumer.cc_max:
        conversion["calling_convention"] = min(max(version, consumer.cc_min), consumer.cc_max)
    elif consumer.cc_max is not None and problems:
        conversion["calling_convention"] = min(version, consumer.cc_max)
    have = artifact_version(exp.mlir_module_serialized)
    if consumer.stablehlo is not None and (have is None or parse_version(have) > parse_version(consumer.stablehlo)):
        conversion["stablehlo_target"] = consumer.stablehlo
    try:
        if conversion.get("calling_convention") is not None and \
                conversion["calling_convention"] not in CONVERTIBLE_CALLING_CONVENTIONS:
            raise ConversionError(f"toolkit converts to calling conventions {CONVERTIBLE_CALLING_CONVENTIONS}; "
                                  f"the consumer reads {consumer.cc_min}..{consumer.cc_max}",
                                  f"calling convention {conversion['calling_convention']}")
        converted = convert(exp, **conversion)
        assert isinstance(converted, Exported)  # not plain: convert returns an Exported
        remaining = _problems(converted, consumer, read_module(converted))
        if remaining:
            raise ConversionError("; ".join(remaining), remaining[0])
    except ConversionError as error:
        return CompatReport(consumer, False, problems, False, conversion, str(error), error.feature)
    return CompatReport(consumer, False, problems, True, conversion)
