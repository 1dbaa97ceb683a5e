"""Mutations of MLIR text and bytecode, and ``toolkit-opt`` command lines to feed them to.

Every function takes a ``random.Random`` (hypothesis' ``st.randoms()`` in the
quick suite, a seeded one in the standing run), so one set of mutators serves
both.
"""

from __future__ import annotations

import re
from typing import Any

# Snippets that stress the lexer, the parser and dialect attribute parsers.
SNIPPETS = [
    "{", "}", "(", ")", "<", ">", "[", "]", '"', "%", "%0", "%arg0", "^bb0", "^bb1:", "#", "!", ":", ",", "=",
    "->", "@", "@main", "0x", "0x7FFFFFFFFFFFFFFF", "dense<", "dense<[[1, 2], [3]]>", "dense<\"0xDEADBEEF\">",
    "99999999999999999999999999", "-1", "-0.0", "1e309", "nan", "inf", "0.", "1.5e-400", "tensor<?x?xf32>",
    "tensor<-1xf32>", "tensor<0x0xi1>", "tensor<4294967296xf32>", "tensor<*xf32>", "tensor<2x!stablehlo.token>",
    "tensor<3xi1024>", "i0", "f8E4M3FN", "complex<i1>", "memref<?xf32>", "vector<4xf32>", "none", "unit",
    "\x00", "\t", "\r\n", "\u00e9", "\U0001f600", "\\", "\\\"", "/*", "//", "// -----", "// expected-error {{x}}",
    "// expected-error@+1 {{", "loc(\"x\":1:2)", "loc(unknown)", "loc(fused[", "#loc = loc(", "attributes {",
    "{mhlo.sharding = \"{devices=[2,1]<=[2]}\"}", "{mhlo.sharding = \"{{{\"}", "sdy.sharding = #sdy.sharding<@m, [{}]>",
    "stablehlo.custom_call @foo(", "stablehlo.constant dense<0> : tensor<i32>", "func.func @f() {",
    "return", "func.return", "module {", "module @m attributes {", "\"stablehlo.add\"(%0, %0)", "<{", "}>",
    "#stablehlo<comparison_direction EQ>", "#stablehlo.scatter<", "#vhlo.", "!vhlo.tensor_v1<", "vhlo.",
    "array<i64: 1, 2>", "array<i64: 9223372036854775807>", "affine_map<(d0) -> (d0)>", "@__dense_resource",
    "dense_resource<blob>", "{-#", "#-}", "dialect_resources: {builtin: {blob: \"0x04000000\"}}",
]

NUMBER = re.compile(r"-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b")
HOSTILE_NUMBERS = ["0", "1", "-1", "2", "3", "-2147483648", "2147483647", "2147483648", "4294967295", "4294967296",
                   "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
                   "99999999999999999999999999999", "1e308", "1e309", "-0.0", "0.5", "1e-320"]


def mutate_text(text: str, rng: Any, tokens: tuple[str, ...] = (), others: tuple[str, ...] = ()) -> str:
    """1-4 stacked edits of ``text``: truncations, deletions, duplications, swaps, token splices, snippets."""
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        text = _one_text_edit(text, rng, tokens, others)
    return text


def _one_text_edit(text: str, rng: Any, tokens: tuple[str, ...], others: tuple[str, ...]) -> str:
    n = len(text)
    pos = rng.randrange(n + 1)
    choice = rng.randrange(12)
    if choice == 0:  # truncate anywhere
        return text[:pos]
    if choice == 1 and n:  # delete a span
        end = min(n, pos + rng.choice([1, 2, 5, 20, 200]))
        return text[:pos] + text[end:]
    if choice == 2 and n:  # duplicate a span
        end = min(n, pos + rng.choice([1, 5, 30, 300]))
        return text[:end] + text[pos:end] + text[end:]
    lines = text.split("\n")
    if choice == 3 and len(lines) > 1:  # drop, duplicate or swap lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        kind = rng.randrange(3)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if choice in (4, 5) and tokens:  # replace a token by another token of the corpus
        matches = list(re.finditer(r"%[\w.#:]+|@[\w.$]+|\b[a-z_]+\.[a-z_.]+\b|tensor<[^<>\n]*>|\b\w+\b", text))
        if matches:
            m = rng.choice(matches)
            return text[:m.start()] + rng.choice(tokens) + text[m.end():]
    if choice == 6:  # a number to a boundary value
        numbers = list(NUMBER.finditer(text))
        if numbers:
            m = rng.choice(numbers)
            return text[:m.start()] + rng.choice(HOSTILE_NUMBERS) + text[m.end():]
    if choice == 7 and others:  # splice with another input
        other = rng.choice(others)
        return text[:pos] + other[rng.randrange(len(other) + 1):]
    if choice == 8 and n:  # flip a character
        return text[:pos] + chr(rng.choice([0, 9, 10, 13, 32, 34, 35, 37, 60, 62, 92, 123, 125, 127, 0xE9,
                                            0x2028, 0xFEFF, rng.randrange(32, 127)])) + text[pos + 1:]
    if choice == 9:  # unbalance or repeat brackets
        return text[:pos] + rng.choice(["(" * 50, "{" * 50, "<" * 50, "[" * 50, ")", "}", ">", "]"]) + text[pos:]
    # insert a snippet
    return text[:pos] + rng.choice(SNIPPETS) + text[pos:]


def mutate_bytes(data: bytes, rng: Any) -> bytes:
    """Byte flips, truncations, insertions, deletions and LEB128-ish varint edits of a binary module."""
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 6])):
        n = len(buf)
        if n == 0:
            buf += bytes([rng.randrange(256)])
            continue
        pos = rng.randrange(n)
        choice = rng.randrange(7)
        if choice == 0:
            buf[pos] = rng.randrange(256)
        elif choice == 1:
            buf[pos] ^= 1 << rng.randrange(8)
        elif choice == 2:
            del buf[pos:pos + rng.choice([1, 2, 4, 16])]
        elif choice == 3:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 4])))
        elif choice == 4:
            buf[pos] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE])
        elif choice == 5:  # a long varint
            buf[pos:pos + 1] = bytes([0xFF] * rng.choice([2, 5, 9, 10]))
        else:
            del buf[pos:]
    if rng.random() < 0.15:
        buf = buf[:rng.randrange(len(buf) + 1)]
    return bytes(buf)


# ``toolkit-opt`` command lines for mutated inputs (the input is ``{input}``).
TEXT_ARGVS = [
    ["{input}"],
    ["{input}"],
    ["{input}", "--split-input-file"],
    ["{input}", "--split-input-file", "--verify-diagnostics"],
    ["{input}", "--emit=bytecode"],
    ["{input}", "--emit=vhlo"],
    ["{input}", "--mlir-print-debuginfo"],
    ["{input}", "--pass-pipeline=builtin.module(canonicalize)"],
    ["{input}", "--pass-pipeline=builtin.module(toolkit-simplify, cse)"],
    ["{input}", "--pass-pipeline=builtin.module(func.func(cse), symbol-dce)"],
    ["{input}", "--toolkit-simplify", "--canonicalize"],
    ["{input}", "--pass-pipeline=builtin.module(stablehlo-refine-shapes)"],
    ["{input}", "--pass-pipeline=builtin.module(toolkit-refine-shapes{mode=stablehlo})"],
    ["{input}", "--pass-pipeline=builtin.module(toolkit-op-stats)"],
    ["{input}", "--split-input-file", "--pass-pipeline=builtin.module(toolkit-simplify)",
     "--mlir-print-ir-after-all"],
    # mlir-opt spellings: single-dash flags, standard input, generic printing
    ["-", "-split-input-file", "-verify-diagnostics"],
    ["{input}", "-canonicalize", "-cse"],
    ["-", "-mlir-print-op-generic"],
    ["{input}", "-allow-unregistered-dialect", "-mlir-print-debuginfo"],
]
BINARY_ARGVS = [
    ["{input}"],
    ["{input}"],
    ["{input}", "--emit=bytecode"],
    ["{input}", "--pass-pipeline=builtin.module(canonicalize)"],
    ["{input}", "--emit=vhlo"],
    ["-", "-mlir-print-op-generic"],
]
