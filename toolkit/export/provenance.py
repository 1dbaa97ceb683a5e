"""Provenance of toolkit-written artifacts: who wrote an export, with which versions, when.

``export()`` records, on the ``Exported`` it returns, a small JSON object::

    {"producer": "toolkit", "producer_version": "0.1.0", "jaxlib": "0.10.2",
     "stablehlo": "1.17.0", "stablehlo_target": "1.15.0",
     "created": "2026-01-31T12:00:00Z"}

and ``serialize`` stores it in the flatbuffer as field :data:`PROVENANCE_FIELD`
of the ``Exported`` table (a string) — a field id far past the 26 of JAX
0.10.2's schema. Flatbuffer readers skip fields their schema does not have,
so JAX reads toolkit's blobs exactly as before (tested:
``jax.export.deserialize`` and ``.call`` of a blob with provenance); every
byte-compatible field is written as before, and an ``Exported`` without a
record (one read from a JAX blob, or built from fields) serializes to the
same bytes JAX writes. ``convert`` records the conversion on top
(``converted``: what, when, from which producer).

The record is not an ``Exported`` field (it does not take part in
equality); :func:`get` reads it. For artifacts without one,
:func:`infer` says what the blob itself tells (StableHLO target of the
artifact, serialization layout, calling convention).

Example::

    exp = toolkit.export.deserialize(blob)
    provenance.get(exp)       # {'producer': 'toolkit', ...} or None
    provenance.infer(exp)     # always a dict
"""

from __future__ import annotations

import datetime
import functools
import json
import os
from importlib import metadata
from typing import Any

import jaxlib.version
from jaxlib.mlir.dialects import stablehlo

from toolkit.export.exported import artifact_version, portable_artifact_target
from toolkit.export.schema import exported_generated
from toolkit.version import __version__

#: Field id of the provenance string in the ``Exported`` flatbuffer table.
PROVENANCE_FIELD = 63
#: Largest provenance record written or read, in bytes.
MAX_RECORD_BYTES = 16384
_ATTRIBUTE = "_toolkit_provenance"


@functools.lru_cache(maxsize=None)
def _jaxlib_version() -> str:
    # Read once: importlib.metadata scans the installed distributions (~1.4 ms, on every export otherwise).
    try:
        return metadata.version("jaxlib")
    except metadata.PackageNotFoundError:
        return jaxlib.version.__version__


def _created() -> str:
    """Now, or ``SOURCE_DATE_EPOCH`` when set (the reproducible-builds convention: the same export made twice,
    or by two processes, is then the same bytes). A value that is not a whole number of seconds is named."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        moment = datetime.datetime.now(datetime.timezone.utc)
    else:
        try:
            moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
        except (ValueError, OverflowError, OSError) as error:
            raise ValueError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got {epoch!r}") \
                from error
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def current(**extra: Any) -> dict[str, Any]:
    """A fresh record for an artifact toolkit writes now (``created``: ``SOURCE_DATE_EPOCH`` when set)."""
    record = {
        "producer": "toolkit",
        "producer_version": __version__,
        "jaxlib": _jaxlib_version(),
        "stablehlo": str(stablehlo.get_current_version()),
        "stablehlo_target": portable_artifact_target(),
        "created": _created(),
    }
    record.update(extra)
    return record


def get(exp: Any) -> dict[str, Any] | None:
    """The provenance record of ``exp`` (None when it has none: JAX-made or built from fields)."""
    record = getattr(exp, "__dict__", {}).get(_ATTRIBUTE)
    return dict(record) if isinstance(record, dict) else None


def attach(exp: Any, record: dict[str, Any] | None) -> Any:
    """Record ``record`` on ``exp`` (in place; ``Exported`` is frozen, the record is not a field); returns ``exp``."""
    object.__setattr__(exp, _ATTRIBUTE, None if record is None else dict(record))
    return exp


def record_export(exp: Any) -> Any:
    """Give a freshly exported ``Exported`` its record (what ``export()`` calls)."""
    return attach(exp, current())


def carry_over(old: Any, new: Any, changes: dict[str, Any]) -> None:
    """Record on ``new`` (converted from ``old``) that toolkit converted it, and from what."""
    what = sorted(k for k in changes if not k.startswith("_"))
    origin = get(old) or {"producer": infer(old).get("producer", "unknown")}
    record = current(converted=", ".join(what) or "nothing",
                     converted_from={k: origin[k] for k in ("producer", "producer_version", "created")
                                     if k in origin})
    attach(new, record)


def encode(record: dict[str, Any]) -> bytes:
    """The bytes stored in the blob (compact JSON, sorted keys)."""
    data = json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"provenance record of {len(data)} bytes is larger than {MAX_RECORD_BYTES}")
    return data


def decode(data: bytes) -> dict[str, Any] | None:
    """The record in ``data``, or None when it is not a JSON object of plain values (then it is ignored)."""
    if len(data) > MAX_RECORD_BYTES:
        return None
    try:
        record = json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    return record


def infer(exp: Any, blob: bytes | None = None) -> dict[str, Any]:
    """What the artifact tells about its producer, for blobs with or without a record."""
    record = get(exp)
    facts: dict[str, Any] = {}
    if record is not None:
        facts.update(record)
    else:
        facts["producer"] = "jax.export (inferred: no toolkit provenance record)"
    target = artifact_version(exp.mlir_module_serialized)
    if target is not None:
        facts["artifact_stablehlo"] = target
    if blob is not None:
        root = exported_generated.Exported.GetRootAs(bytearray(blob), 0)
        if root.UniqueAvalsLength() > 0 or root.UniqueNamedShardingsLength() > 0:
            facts["layout"] = "de-duplicated avals/shardings (JAX serialization version >= 10)"
        elif root.NrDevices() > 0:
            facts["layout"] = "inline avals/shardings (JAX serialization version 5..9)"
        else:
            facts["layout"] = "16-bit nr_devices (JAX serialization version < 5)"
    if record is None:
        facts["calling_convention_hint"] = {
            8: "JAX's default from 0.4.20 (Oct 2023) to 0.4.24, or a toolkit conversion",
            9: "JAX's default from 0.4.24 (Feb 2024), or jax_export_calling_convention_version=9",
            10: "JAX's default once XlaCallModule read it (May 2025); JAX 0.10.2 writes it",
        }.get(exp.calling_convention_version, "unknown")
    return facts
