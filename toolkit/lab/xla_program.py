"""What XLA made of a program: its optimized HLO, counted — the kernels XLA generated code for.

XLA CPU compiles one LLVM module per fusion, so a program's compile time follows its kernel count,
and two modules that optimize to the same kernels cost XLA the same work whoever lowered them. A
pass that leaves the StableHLO smaller but the kernels as they were saves nothing in XLA's compile;
one that changes the kernels changes what runs. ``toolkit lab`` reports these counts before and
after a pipeline (``LabRow.xla_before``/``xla_after``), and ``bench/workload.py`` side by side with
JAX's for the same training step.

:class:`XlaCounts` counts the instructions XLA executes: those of the entry computation, of the
computations it calls (an outlined ``call`` XLA kept) and of the bodies and conditions of its loops
and conditionals — not the instructions inside fusions, which are the kernels' bodies.

Example::

    compiled = toolkit.jit(f).lower(x).compile()
    counts = XlaCounts.of(compiled.as_text())
    counts.kernels, counts.copies, counts.loops
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["XlaCounts"]

# An HLO computation's header line (``ENTRY %main.3 (...) -> ... {``, ``%region_0.1 (...) -> ... {``).
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.-]+) .*\{$")
# An instruction: ``  %name = type opcode(operands), attributes`` (``ROOT`` first for the result).
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?[\w.-]+ = .*? ([a-z][\w-]*)\(")
# Computations an instruction runs as part of the program (not a fusion's body, nor a reduction's combiner).
_CONTROL_FLOW_CALLEES = re.compile(r"(?:body|condition|true_computation|false_computation)=%?([\w.-]+)"
                                   r"|branch_computations=\{([^}]*)\}")
_CALLEE = re.compile(r"to_apply=%?([\w.-]+)")
_FUSION_KIND = re.compile(r"kind=(\w+)")


@dataclasses.dataclass(frozen=True)
class XlaCounts:
    """Counts of an optimized HLO module's executed instructions (see the module docstring for which).

    ``kernels``: fusions, each compiled to code of its own (``loop_fusions``: XLA's elementwise kernels,
    ``custom_fusions``: library-backed ones such as YNNPACK's, ``other_fusions``: any other kind);
    ``dots`` and ``custom_calls``: library calls outside fusions; ``copies``: buffer copies XLA had to
    add (layouts, loop-carried values); ``loops``: ``while`` instructions; ``instructions``: all of them.
    """

    kernels: int = 0
    loop_fusions: int = 0
    custom_fusions: int = 0
    other_fusions: int = 0
    dots: int = 0
    custom_calls: int = 0
    copies: int = 0
    loops: int = 0
    instructions: int = 0

    @staticmethod
    def of(hlo: str) -> "XlaCounts":
        """The counts of ``hlo``, an optimized HLO module as text (``Compiled.as_text()``; JAX's too).

        Text with no ``ENTRY`` computation counts nothing.
        """
        computations: dict[str, list[str]] = {}
        entry, current = "", None
        for line in hlo.splitlines():
            header = _COMPUTATION.match(line)
            if header:
                current = computations.setdefault(header.group(1), [])
                entry = header.group(1) if line.startswith("ENTRY") else entry
            elif current is not None and line.strip() not in ("", "}"):
                current.append(line)
        counts = {field.name: 0 for field in dataclasses.fields(XlaCounts)}
        by_opcode = {"dot": "dots", "custom-call": "custom_calls", "copy": "copies", "while": "loops"}
        by_kind = {"kLoop": "loop_fusions", "kCustom": "custom_fusions"}
        pending, seen = [entry], set()
        while pending:
            name = pending.pop()
            if name in seen or name not in computations:
                continue
            seen.add(name)
            for line in computations[name]:
                match = _INSTRUCTION.match(line)
                if not match:
                    continue
                opcode = match.group(1)
                counts["instructions"] += 1
                if opcode == "fusion":
                    counts["kernels"] += 1
                    kind = _FUSION_KIND.search(line)
                    counts[by_kind.get(kind.group(1) if kind else "", "other_fusions")] += 1
                elif opcode in by_opcode:
                    counts[by_opcode[opcode]] += 1
                for single, several in _CONTROL_FLOW_CALLEES.findall(line):
                    pending += [single] if single else [c.strip().lstrip("%") for c in several.split(",")]
                if opcode == "call":  # an outlined computation XLA kept (a scan's, for one) runs as its caller
                    pending += _CALLEE.findall(line)
        return XlaCounts(**counts)

    def to_dict(self) -> dict[str, int]:
        """The counts by field name (the lab's ``--json`` rows)."""
        return dataclasses.asdict(self)
