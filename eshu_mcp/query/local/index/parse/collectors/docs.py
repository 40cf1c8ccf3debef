"""
Documentation: Markdown and reStructuredText documents, their sections, links and the code
they mention.

Facts (Eshu's documentation fact kinds): ``documentation_document`` (title, format),
``documentation_section`` (heading text, level, anchor, ordinal path),
``documentation_link`` (target URI and kind) and ``documentation_entity_mention``: candidate
identifiers (inline code spans, reST roles such as ``:func:`x```, repository paths written in
prose). Whether a mention names an indexed entity or file is decided at query time, against
the index as it is then, so a renamed function makes its mentions unresolved without
re-reading the docs.
"""

from __future__ import annotations

import re

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact

DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst")

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MD_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_RST_ADORN = re.compile(r"^([=\-~^\"'`#*+_:.<>])\1{2,}\s*$")
_RST_ROLE = re.compile(
    r":(?:py:)?(func|meth|class|mod|attr|obj|data|exc|const|file):`~?([^`<]+?)(?:\s*<([^>]+)>)?`"
)
_RST_LITERAL = re.compile(r"``([^`]+)``")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<([^>]+)>`__?")
_PATH = re.compile(r"(?<![\w/.@:-])((?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z0-9]{1,8})(?![\w/])")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?$")
_FILE_NAME = re.compile(
    r"^[\w.-]+\.(?:py|go|js|jsx|ts|tsx|java|rs|rb|php|c|h|cc|cpp|hpp|cs|kt|scala|swift|sh|toml|ya?ml|json|cfg|ini|md|rst)$"
)

MAX_MENTION_LENGTH = 200


def _anchor(text: str, seen: dict[str, int]) -> str:
    """GitHub's heading anchor: lower-case, punctuation dropped, spaces to dashes, deduped."""
    slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def mention_kind(text: str) -> str | None:
    """``path``, ``identifier`` or None (not something the index could name)."""
    text = text.strip()
    if not text or len(text) > MAX_MENTION_LENGTH:
        return None
    if "/" in text and " " not in text and "://" not in text and _PATH.fullmatch(text):
        return "path"
    if _FILE_NAME.match(text):
        return "path"
    if _IDENTIFIER.match(text):
        return "identifier"
    return None


class _Document:
    def __init__(self, relative_path: str, doc_format: str) -> None:
        self.path = relative_path
        self.format = doc_format
        self.facts: list[Fact] = []
        self.title = ""
        self.section_id = ""
        self.anchors: dict[str, int] = {}
        self.ordinals: list[int] = []

    def section(self, text: str, level: int, line: int) -> None:
        text = text.strip()
        if not text:
            return
        del self.ordinals[level:]
        while len(self.ordinals) < level:
            self.ordinals.append(0)
        self.ordinals[level - 1] += 1
        anchor = _anchor(text, self.anchors)
        parent = self.section_id if level > 1 else ""
        self.section_id = f"{self.path}#{anchor}"
        if not self.title:
            self.title = text
        self.facts.append(
            Fact(
                "documentation_section",
                text,
                line,
                {
                    "document_id": self.path,
                    "section_id": self.section_id,
                    "section_anchor": anchor,
                    "heading_text": text,
                    "level": level,
                    "ordinal_path": list(self.ordinals),
                    "parent_section_id": parent,
                },
            )
        )

    def link(self, target: str, text: str, line: int) -> None:
        if target.startswith(("http://", "https://", "mailto:")):
            kind = "external"
        elif target.startswith("#"):
            kind = "anchor"
        else:
            kind = "repository_path"
        self.facts.append(
            Fact(
                "documentation_link",
                target,
                line,
                {
                    "document_id": self.path,
                    "section_id": self.section_id,
                    "target_uri": target,
                    "target_kind": kind,
                    "text": text.strip()[:MAX_MENTION_LENGTH],
                },
            )
        )
        path = target.split("#", 1)[0].split("?", 1)[0]
        if kind == "repository_path" and "." in path.rsplit("/", 1)[-1].strip("."):
            self.mention(path, line, "link", force_kind="path")  # a file, not a site route

    def mention(self, text: str, line: int, how: str, force_kind: str | None = None) -> None:
        text = text.strip()
        kind = force_kind if text else None
        kind = kind or mention_kind(text)
        if kind is None:
            return
        self.facts.append(
            Fact(
                "documentation_entity_mention",
                text,
                line,
                {
                    "document_id": self.path,
                    "section_id": self.section_id,
                    "mention_text": text,
                    "mention_kind": kind,
                    "written_as": how,
                },
            )
        )

    def finish(self, line_count: int) -> list[Fact]:
        document = Fact(
            "documentation_document",
            self.path,
            1,
            {
                "document_id": self.path,
                "title": self.title or self.path.rsplit("/", 1)[-1],
                "format": self.format,
                "line_count": line_count,
                "sections": sum(1 for f in self.facts if f.kind == "documentation_section"),
            },
        )
        return [document, *self.facts]


def _prose_mentions(doc: _Document, line: str, number: int, code_spans: list[str]) -> None:
    for span in code_spans:
        doc.mention(span, number, "code_span")
    for match in _PATH.finditer(line):
        if "://" not in line[max(0, match.start() - 12) : match.start()]:
            doc.mention(match.group(1), number, "prose")


def collect_markdown(relative_path: str, text: str) -> list[Fact]:
    """Headings (ATX and setext), links and mentions outside fenced code blocks."""
    doc = _Document(relative_path, "markdown")
    lines = text.splitlines()
    fence = ""
    previous = ""
    for number, line in enumerate(lines, start=1):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            previous = ""
            continue
        if opened:
            fence = opened.group(1)
            previous = ""
            continue
        heading = _ATX.match(line)
        if heading:
            doc.section(
                _MD_CODE.sub(lambda m: m.group(2), heading.group(2)), len(heading.group(1)), number
            )
        elif previous.strip() and _SETEXT.match(line) and not previous.startswith((" " * 4, "\t")):
            doc.section(previous, 1 if line.strip()[0] == "=" else 2, number - 1)
        for link in _MD_LINK.finditer(line):
            doc.link(link.group(2), link.group(1), number)
        spans = [match.group(2).strip() for match in _MD_CODE.finditer(line)]
        _prose_mentions(doc, _MD_CODE.sub(" ", _MD_LINK.sub(" ", line)), number, spans)
        previous = line
    return doc.finish(len(lines))


def collect_rst(relative_path: str, text: str) -> list[Fact]:
    """Section titles (levels in order of first use of each adornment), roles, literals, links."""
    doc = _Document(relative_path, "restructuredtext")
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    in_literal_block = False
    for index, line in enumerate(lines):
        number = index + 1
        stripped = line.strip()
        if in_literal_block:
            if stripped and not line.startswith((" ", "\t")):
                in_literal_block = False
            else:
                continue
        adorn = _RST_ADORN.match(line)
        if (
            adorn
            and index > 0
            and lines[index - 1].strip()
            and not _RST_ADORN.match(lines[index - 1])
        ):
            title = lines[index - 1]
            if len(stripped) >= len(title.strip()) and not title.startswith(" "):
                overlined = index > 1 and lines[index - 2].strip() == stripped
                style = (stripped[0], overlined)
                if style not in styles:
                    styles.append(style)
                doc.section(title, styles.index(style) + 1, index)
                continue
        if stripped.endswith("::") and not stripped.startswith(".. "):
            in_literal_block = True
        if stripped.startswith(".. code") or stripped.startswith(".. sourcecode"):
            in_literal_block = True
        target = re.match(r"^\.\. _[^:]+:\s*(\S+)$", stripped)
        if target:
            doc.link(target.group(1), "", number)
            continue
        for link in _RST_LINK.finditer(line):
            doc.link(link.group(2), link.group(1), number)
        for role in _RST_ROLE.finditer(line):
            doc.mention(role.group(3) or role.group(2), number, "role")
        spans = [literal.group(1) for literal in _RST_LITERAL.finditer(line)]
        prose = _RST_LITERAL.sub(" ", _RST_ROLE.sub(" ", _RST_LINK.sub(" ", line)))
        _prose_mentions(doc, prose, number, spans)
    return doc.finish(len(lines))


def _collect_document(relative_path: str, text: str) -> list[Fact]:
    if relative_path.lower().endswith(".rst"):
        return collect_rst(relative_path, text)
    return collect_markdown(relative_path, text)


DOCUMENTATION_COLLECTOR = Collector(
    artifact_type="documentation",
    collect=_collect_document,
    suffixes=DOC_SUFFIXES,
)
