"""What a pass is: a frozen dataclass whose fields are its options.

A pass has a pipeline ``name`` (``toolkit-simplify``), a one-line
``description`` and an ``apply(op)`` method that changes the IR in place.
Its dataclass fields are its typed options; they parse from and print to the
MLIR pipeline syntax ``name{option-one=value option-two=value}`` (underscores
in field names become dashes), so every pipeline round-trips as text.

Two kinds:

* :class:`ModulePass` — ``apply(op)`` gets the anchor operation (the
  ``builtin.module``, or each ``func.func`` when nested in ``func.func(...)``)
  and may do anything to it.
* :class:`PatternPass` — ``patterns()`` returns :class:`Pattern` objects that a
  greedy (or walk) driver applies until nothing matches.

Example::

    @register_pass
    @dataclass(frozen=True)
    class CountAdds(ModulePass):
        name: ClassVar[str] = "count-adds"
        description: ClassVar[str] = "Counts stablehlo.add ops."
        verbose: bool = False

        def apply(self, op: ir.Operation) -> None:
            ...
"""

from __future__ import annotations

import contextvars
import dataclasses
import difflib
import re
import typing
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal, Protocol

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs._mlir import rewrite as _rewrite

from toolkit.ir.errors import PassFailure
from toolkit.ir.rewriting import CheckedRewriter

__all__ = ["ModulePass", "Pass", "PassFailure", "PassOptionError", "Pattern", "PatternPass", "RewriteFunction", "pattern",
           "record_statistic"]


class PassOptionError(ValueError):
    """An option given to a pass does not exist or has a bad value."""


class PipelineError(ValueError):
    """A pipeline failed to parse, or a pass in it failed or broke the IR.

    A failing pass sets ``pass_name`` (e.g. ``cse``), ``pass_pipeline`` (that
    pass alone as a pipeline, anchors included) and ``module_before`` (the IR
    text just before it, locations included): a reproducer's contents. All
    three are None for parse errors.
    """

    pass_name: str | None = None
    pass_pipeline: str | None = None
    module_before: str | None = None


@dataclasses.dataclass(frozen=True)
class FailureSite:
    """Where inside a pass an exception was raised, when the pass knows better than the runner.

    A pattern pass records the op its pattern was matching and the pattern's
    source file, so the runner can point the diagnostic at both.
    """

    op: ir.Operation
    description: str  # e.g. "pattern 'fold_add'"
    source_files: tuple[str, ...] = ()


# Failure sites recorded by the pass that is running right now (the runner sets a list).
_active_failure_sites: contextvars.ContextVar[list[FailureSite] | None] = contextvars.ContextVar(
    "toolkit_pass_failure_sites", default=None
)


def _record_failure_site(site: FailureSite) -> None:
    sites = _active_failure_sites.get()
    if sites is not None:
        sites.append(site)


# Statistics of the pass that is running right now: name -> count.
_active_statistics: contextvars.ContextVar[Counter | None] = contextvars.ContextVar(
    "toolkit_pass_statistics", default=None
)


def record_statistic(key: str, count: int = 1) -> None:
    """Add ``count`` to statistic ``key`` of the running pass (no-op outside one).

    Pattern passes record every fired pattern this way; module passes may too.
    """
    statistics = _active_statistics.get()
    if statistics is not None:
        statistics[key] += count


_BUILTIN_TYPE_NAMES = {"bool": bool, "int": int, "float": float, "str": str}


def _type_hints(cls: type) -> dict[str, Any]:
    # get_type_hints needs the annotation names importable from the module;
    # passes defined inside a function (tests, notebooks) may not have that.
    try:
        return typing.get_type_hints(cls)
    except NameError:
        hints = {}
        for field in dataclasses.fields(cls):
            kind = field.type
            if isinstance(kind, str):
                kind = _BUILTIN_TYPE_NAMES.get(kind, kind)
            hints[field.name] = kind
        return hints


def _option_name(field_name: str) -> str:
    return field_name.replace("_", "-")


def _format_option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(_format_option_value(v) for v in value)
    text = str(value)
    if any(c in text for c in " {}") or text == "":
        return '"' + text.replace('"', '\\"') + '"'
    return text


def _parse_scalar(text: str, kind: Any, option: str, pass_name: str) -> Any:
    def bad(expected: str) -> PassOptionError:
        return PassOptionError(
            f"pass '{pass_name}': option '{option}' expects {expected}, got {text!r}"
        )

    if typing.get_origin(kind) is Literal:
        allowed = typing.get_args(kind)
        for choice in allowed:
            if str(choice) == text:
                return choice
        raise bad("one of " + ", ".join(str(a) for a in allowed))
    if kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1", "on", ""):
            return True
        if lowered in ("false", "0", "off"):
            return False
        raise bad("true or false")
    if kind is int:
        try:
            return int(text, 0)
        except ValueError:
            raise bad("an integer") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise bad("a number") from None
    if kind is str:
        return text
    raise bad(f"a value of type {kind}")


_OPTION_NAME = re.compile(r"[A-Za-z0-9_\-]+")


def parse_options(text: str, pass_name: str = "") -> dict[str, str]:
    """Split ``a=1 b={x y} c="q r" flag`` into ``{"a": "1", ...}``."""
    options: dict[str, str] = {}
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        match = _OPTION_NAME.match(text, i)
        if not match:
            raise PipelineError(f"pass '{pass_name}': bad option text {text!r}")
        key, i = match.group(), match.end()
        if i < len(text) and text[i] == "=":
            i += 1
            if i < len(text) and text[i] in "{\"":
                opener = text[i]
                closer = "}" if opener == "{" else '"'
                depth, j = 0, i
                while j < len(text):
                    if text[j] == opener and (opener == "{" or j == i):
                        depth += 1
                    elif text[j] == closer and (closer == "}" or j > i):
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                if j >= len(text):
                    raise PipelineError(f"pass '{pass_name}': unbalanced option value in {text!r}")
                value = text[i + 1:j]
                i = j + 1
            else:
                j = i
                while j < len(text) and not text[j].isspace():
                    j += 1
                value, i = text[i:j], j
        else:
            value = "true"
        options[key] = value
    return options


def _split_option_values(text: str) -> list[str]:
    return [piece.strip() for piece in text.split(",")] if text else []


@dataclasses.dataclass(frozen=True)
class Pass:
    """Common base: name, description, options; subclasses define ``apply``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: False for read-only passes (analyses, reports): the runner then skips
    #: verifying the IR after them.
    modifies_ir: ClassVar[bool] = True

    # -- options -------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        """The dataclass fields that are pipeline options, in order."""
        return [f for f in dataclasses.fields(cls) if f.init]

    @classmethod
    def option_help(cls) -> list[tuple[str, str, str, str]]:
        """``(option-name, type, default, help)`` rows for ``--list-passes``.

        Help text comes from ``dataclasses.field(metadata={"help": ...})``.
        """
        hints = _type_hints(cls)
        rows = []
        for field in cls.option_fields():
            kind = hints[field.name]
            if typing.get_origin(kind) is Literal:
                type_text = "|".join(str(a) for a in typing.get_args(kind))
            else:
                type_text = getattr(kind, "__name__", str(kind))
            default = field.default if field.default is not dataclasses.MISSING else (
                field.default_factory() if field.default_factory is not dataclasses.MISSING else None  # type: ignore[misc]
            )
            rows.append((_option_name(field.name), type_text,
                         "" if default is None else _format_option_value(default),
                         field.metadata.get("help", "")))
        return rows

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "Pass":
        """Build the pass from textual ``{option-name: value}`` pairs.

        Raises :class:`PassOptionError` naming the close option names on a typo.
        """
        hints = _type_hints(cls)
        by_option = {_option_name(f.name): f for f in cls.option_fields()}
        kwargs = {}
        for option, text in options.items():
            field = by_option.get(option)
            if field is None:
                close = difflib.get_close_matches(option, list(by_option), n=3)
                known = ", ".join(by_option) or "none"
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise PassOptionError(
                    f"pass '{cls.name}' has no option '{option}' (options: {known}){hint}"
                )
            kind = hints[field.name]
            origin = typing.get_origin(kind)
            if origin in (tuple, list):
                element = typing.get_args(kind)[0]
                value = tuple(_parse_scalar(v, element, option, cls.name)
                              for v in _split_option_values(text))
            else:
                value = _parse_scalar(text, kind, option, cls.name)
            kwargs[field.name] = value
        return cls(**kwargs)

    def options_text(self) -> str:
        """Non-default options as ``a=1 b=x`` (empty when all are default)."""
        parts = []
        for field in self.option_fields():
            value = getattr(self, field.name)
            if field.default is not dataclasses.MISSING and value == field.default:
                continue
            if (field.default_factory is not dataclasses.MISSING  # type: ignore[misc]
                    and value == field.default_factory()):  # type: ignore[misc]
                continue
            parts.append(f"{_option_name(field.name)}={_format_option_value(value)}")
        return " ".join(parts)

    def pipeline_text(self) -> str:
        """How this pass prints in a pipeline: ``name`` or ``name{opts}``."""
        options = self.options_text()
        return f"{self.name}{{{options}}}" if options else self.name

    def __str__(self) -> str:
        return self.pipeline_text()

    # -- running -------------------------------------------------------------
    def apply(self, op: ir.Operation) -> None:  # pragma: no cover - abstract
        """Change ``op`` (the anchor operation) in place."""
        raise NotImplementedError(f"pass '{self.name}' does not define apply()")


@dataclasses.dataclass(frozen=True)
class ModulePass(Pass):
    """A pass written as one function over the anchor op (usually the module).

    Contract: ``apply`` leaves valid IR (the runner verifies it afterwards),
    raises :class:`PassFailure` to fail, and holds no op handle across calls.
    Erase ops with ``toolkit.ir.rewriting.erase_op(op)``, which refuses while
    their results are used; a bare ``op.erase()`` of a used op leaves freed
    memory behind (the runner then fails the pass and never frees the module).
    """


class RewriteFunction(Protocol):
    """``rewrite(op, rewriter) -> True`` when it changed the IR through ``rewriter``; False or None on a miss."""

    __name__: str

    def __call__(self, op: ir.Operation, rewriter: CheckedRewriter, /) -> bool | None: ...


@dataclasses.dataclass(frozen=True)
class Pattern:
    """One rewrite rule: a root op name and a function that tries to rewrite.

    ``rewrite(op, rewriter) -> bool`` returns True when it changed the IR
    (through ``rewriter``, a :class:`~toolkit.ir.rewriting.CheckedRewriter`)
    and False/None on a miss. The adapter in
    :meth:`PatternPass.build_pattern_set` turns that into jaxlib's inverted
    convention and counts hits under the pattern's ``name``.
    """

    root: str
    rewrite: RewriteFunction
    name: str
    benefit: int = 1


def pattern(root: str, *, name: str | None = None, benefit: int = 1
            ) -> Callable[[RewriteFunction], Pattern]:
    """Decorator turning ``def f(op, rewriter) -> bool`` into a :class:`Pattern`.

    Example::

        @pattern("stablehlo.multiply")
        def multiply_by_one(op, rewriter):
            # x * 1 -> x
            ...
            return True
    """

    def wrap(fn: RewriteFunction) -> Pattern:
        return Pattern(root=root, rewrite=fn, name=name or fn.__name__, benefit=benefit)

    return wrap


class _PatternRun:
    """State shared by the adapted patterns of one :meth:`PatternPass.apply`.

    A Python exception must not unwind through jaxlib's C++ rewrite driver,
    so the adapter keeps the first one here, makes every later match attempt
    a miss (the driver then stops) and ``apply`` re-raises it afterwards.
    """

    __slots__ = ("error", "op", "pattern")

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.op: ir.Operation | None = None
        self.pattern: Pattern | None = None


def _adapt(p: Pattern, run: _PatternRun | None = None) -> Callable[[Any, Any], bool]:
    """The one place that speaks jaxlib's "truthy means no match" convention.

    It also hands the pattern a :class:`~toolkit.ir.rewriting.CheckedRewriter`
    (erase/replace refuse to leave uses of an erased op) and keeps exceptions
    out of the C++ driver (see :class:`_PatternRun`).
    """
    rewrite, key = p.rewrite, p.name
    run = run if run is not None else _PatternRun()

    def adapted(op: Any, rewriter: Any) -> bool:
        if run.error is not None:
            return True  # a pattern failed: let the driver finish without changes
        operation = op.operation if hasattr(op, "operation") else op
        try:
            rewrote = rewrite(operation, CheckedRewriter(rewriter))
        except BaseException as error:  # noqa: BLE001 - re-raised by PatternPass.apply
            run.error, run.op, run.pattern = error, operation, p
            return True
        if rewrote:
            record_statistic(key)
            return False  # matched and rewrote
        return True  # no match

    return adapted


@dataclasses.dataclass(frozen=True)
class PatternPass(Pass):
    """A pass made of rewrite patterns applied until a fixed point.

    Set ``driver = "walk"`` (class attribute) for one post-order sweep without
    folding or dead-code removal; the default greedy driver also folds
    constants and erases ops left dead.
    """

    driver: ClassVar[Literal["greedy", "walk"]] = "greedy"

    def patterns(self) -> Iterable[Pattern]:  # pragma: no cover - abstract
        """The rules, e.g. ``[add_zero, multiply_by_one]``."""
        raise NotImplementedError(f"pass '{self.name}' does not define patterns()")

    def build_pattern_set(self, context: ir.Context, run: _PatternRun | None = None) -> Any:
        """The frozen jaxlib pattern set for ``context`` (``run`` collects a pattern's exception)."""
        pattern_set = _rewrite.RewritePatternSet(context)
        for p in self.patterns():
            pattern_set.add(p.root, _adapt(p, run), p.benefit)
        return pattern_set.freeze()

    def apply(self, op: ir.Operation) -> None:
        """Apply :meth:`patterns` to ``op``: with the greedy driver until nothing matches (folding too), or one
        sweep when ``driver == "walk"``. Each rule that fires is counted in the pass's statistics.
        """
        run = _PatternRun()
        frozen = self.build_pattern_set(op.context, run)
        if self.driver == "walk":
            _rewrite.walk_and_apply_patterns(op, frozen)
        else:
            _rewrite.apply_patterns_and_fold_greedily(op, frozen)
        if run.error is not None:
            assert run.op is not None and run.pattern is not None
            code = getattr(run.pattern.rewrite, "__code__", None)
            _record_failure_site(FailureSite(run.op, f"pattern '{run.pattern.name}'",
                                             (code.co_filename,) if code is not None else ()))
            raise run.error
