"""A Markdown extension for the docs site: doctest examples in docstrings render as code blocks.

toolkit's docstrings show examples doctest-style (``>>> keystr(path)`` at the text's indentation), which Markdown
would read as a paragraph (and ``['a'][0]`` in it as a link). This wraps each run of lines starting at a ``>>>``
line — up to the next blank line — in a ``pycon`` fenced block. Lines inside existing fences are left alone.
mkdocs.yml names it (scripts/docs.sh puts scripts/ on PYTHONPATH).
"""

from __future__ import annotations

import re

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class DoctestBlocks(Preprocessor):
    """Wraps runs of doctest lines outside fences in ```pycon fences."""

    def run(self, lines: list[str]) -> list[str]:
        """The lines with each doctest run fenced."""
        out: list[str] = []
        fence: str | None = None
        in_doctest = False
        indent = ""
        for line in lines:
            opened = _FENCE.match(line)
            if in_doctest and not line.strip():
                out += [f"{indent}```", line]
                in_doctest = False
                continue
            if in_doctest:
                out.append(line)
                continue
            if fence is not None:
                if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                    fence = None
                out.append(line)
                continue
            if opened:
                fence = opened.group(1)
                out.append(line)
                continue
            if line.lstrip().startswith(">>>"):
                indent = line[: len(line) - len(line.lstrip())]
                out += ["", f"{indent}```pycon", line]
                in_doctest = True
                continue
            out.append(line)
        if in_doctest:
            out.append(f"{indent}```")
        return out


class DoctestBlocksExtension(Extension):
    """Registers :class:`DoctestBlocks` before the fenced-code preprocessors run."""

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 - Python-Markdown's name
        """Adds the preprocessor to ``md``."""
        md.preprocessors.register(DoctestBlocks(md), "toolkit_doctest_blocks", 40)


def makeExtension(**kwargs: object) -> DoctestBlocksExtension:  # noqa: N802 - Python-Markdown's name
    """The extension, as Python-Markdown loads it by module name."""
    return DoctestBlocksExtension(**kwargs)
