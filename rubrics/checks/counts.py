"""Count kinds: words, Chinese characters, sentences, paragraphs, list items, sections,
headings, highlighted spans, placeholders and capitalised words, each against a relation.
Where the words can stay as they are, a count is met by layout alone, as the kind's `conform`:
a list of the right length in the other style (numbered for bullets, bullets for numbers) is
restyled, prose sentences are regrouped into as many paragraphs as asked, and sentences are
put in bold for highlights."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rubrics.checks.base import (
    COUNT_PARAMS,
    COUNT_PROPS,
    CheckKind,
    CheckOutcome,
    bounds,
    counted,
    params_schema,
    relation_holds,
    string,
)

_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\s\u3400-\u9fff\uf900-\ufaff]+")
_SENTENCE_END = re.compile(r"[.!?…]+(?=[\s\"'”’)\]]|$)|[。！？]+")
# a title before a name, or a dotted abbreviation of two or more letters (e.g., i.e., U.S.)
_ABBREVIATION = re.compile(r"\b(?:(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs)\.|(?:[A-Za-z]\.){2,})")
_POSTSCRIPT = re.compile(r"(?:^|\n)[ \t*_]*P\.(?:P\.)?S\.?[\s\S]*$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^[ \t]*[-*•+][ \t]+\S", re.M)
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)、．][ \t]*\S", re.M)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.M)
_HIGHLIGHT = re.compile(r"\*\*[^*\n]+\*\*|(?<!\*)\*[^*\n\s][^*\n]*\*(?!\*)")
_PLACEHOLDER = re.compile(r"(?<!\[)\[[^\[\]\n]{1,80}\](?!\])")
_CAPITAL_WORD = re.compile(r"\b[A-Z]{2,}(?:['’-][A-Z]+)*\b")
_ZH_NUMERAL = "一二三四五六七八九十百零〇两"
# a section heading when the request names no marker: "一、", "第一部分/章/节", "Part 1"
_ORDINAL_SECTION = re.compile(rf"^[ \t#*]*(?:[{_ZH_NUMERAL}]+[、.．]"
                              rf"|第[{_ZH_NUMERAL}\d]+[部分章节篇]"
                              r"|(?:part|chapter|section)\s+(?:\d+|[ivx]+|one|two|three|four|five)\b)",
                              re.M | re.I)
_HEADING_LEVEL = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+\S", re.M)


def count_words(text: str) -> int:
    """Words as WritingBench counts them: whitespace-separated tokens, each CJK character one."""
    return len(_WORD.findall(text))


def count_cjk(text: str) -> int:
    """Chinese characters (字), punctuation and Latin text not counted."""
    return len(_CJK_CHAR.findall(text))


def count_sentences(text: str) -> int:
    """Sentences of the body: a period of a title ("Dr.") or of a dotted abbreviation ("e.g.",
    "P.S.", "U.S.") ends none, and a postscript (a last block whose line opens with "P.S.")
    is outside the body a sentence count is about ("a two-sentence note ... add a P.S.")."""
    body = _POSTSCRIPT.sub("", text)
    parts = _SENTENCE_END.split(_masked(body))
    return sum(1 for p in parts if re.search(r"\w", p))


def count_paragraphs(text: str, divider: str | None = None) -> int:
    """Non-empty blocks between blank lines, or between occurrences of `divider` (`***`; a
    markdown divider may be written with spaces between its marks, `* * *`)."""
    if divider:
        spaced = r"[ \t]?".join(map(re.escape, divider.strip())) if len(set(divider.strip())) == 1 \
            else re.escape(divider)
        parts = re.split(spaced, text)
    else:
        parts = _PARAGRAPH_BREAK.split(text)
    return sum(1 for p in parts if p.strip())


def count_sections(text: str, marker: str | None) -> int:
    """Lines opening with `marker` and a number or a word ("SECTION 1", "Section X"), or with
    no marker, section headings (markdown or Chinese ordinals)."""
    if not marker:
        # headings of the shallowest level used more than once (a lone title above them is
        # not a section), or ordinal openings, whichever finds more
        levels = [len(h) for h in _HEADING_LEVEL.findall(text)]
        repeated = [lv for lv in set(levels) if levels.count(lv) > 1]
        headed = levels.count(min(repeated)) if repeated else len(levels)
        return max(headed, len(_ORDINAL_SECTION.findall(text)))
    pattern = re.compile(rf"^[ \t#*]*{re.escape(marker.strip())}[ \t]*[\w{_ZH_NUMERAL}]",
                         re.M | re.I)
    return len(pattern.findall(text))


def _count_kind(name: str, description: str, unit: str, count,  # type: ignore[no-untyped-def]
                conform=None, how: str = ""):
    def run(text: str, params: Mapping[str, Any]) -> CheckOutcome:
        return counted(name, count(text), params, unit, how=how)
    return CheckKind(name, description, COUNT_PARAMS, run, conform)


# a list item's marker, up to its first word: what restyling a list replaces
_NUMBER_MARK = re.compile(r"^([ \t]*)\d{1,3}[.)、．][ \t]*(?=\S)", re.M)
_BULLET_MARK = re.compile(r"^([ \t]*)[-*•+][ \t]+(?=\S)", re.M)


def _restyled(text: str, params: Mapping[str, Any], have: re.Pattern[str],
              want: re.Pattern[str], mark) -> str | None:  # type: ignore[no-untyped-def]
    """The text's list in the wanted style, when it has no item of that style and the right
    number of items of the other; None otherwise."""
    if want.search(text):
        return None
    found = len(have.findall(text))
    if not found or not relation_holds(found, params["relation"], int(params["n"]),
                                       params.get("upper")):
        return None
    numbers = iter(range(1, found + 1))
    return have.sub(lambda m: f"{m.group(1)}{mark(next(numbers))}", text)


def _as_bullets(text: str, params: Mapping[str, Any]) -> str | None:
    return _restyled(text, params, _NUMBER_MARK, _BULLET_MARK, lambda _: "- ")


def _as_numbers(text: str, params: Mapping[str, Any]) -> str | None:
    return _restyled(text, params, _BULLET_MARK, _NUMBER_MARK, lambda i: f"{i}. ")


def _masked(text: str) -> str:
    """`text` with the periods of titles and dotted abbreviations ("Dr.", "e.g.") made into
    one-dot leaders, so a sentence end is found by position in the text as it stands."""
    return _ABBREVIATION.sub(lambda m: m.group(0).replace(".", "\u2024"), text)


# a sentence of one line: up to its closing marks (and a quote or bracket after them)
_SENTENCE = re.compile(r"\S[^.!?…。！？]*(?:[.!?…。！？]+[\"'”’)\]]*|$)")
# what opens a line before its words: indent, and a list item's or a heading's mark
_LINE_MARK = re.compile(r"[ \t]*(?:[-•+]|\d{1,3}[.)、．]|#{1,6})?[ \t]*")


def _sentences(line: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of one line, its closing marks in and its trailing
    spaces out."""
    spans = []
    for m in _SENTENCE.finditer(_masked(line)):
        end = m.start() + len(m.group(0).rstrip())
        if re.search(r"\w", line[m.start():end]):
            spans.append((m.start(), end))
    return spans


# a line whose layout is not prose: a list item, a heading, a quote, a table row, a title
# or a postscript
_NOT_PROSE = re.compile(r"^[ \t]*(?:[-*•+>|#]|\d{1,3}[.)、．]|<<|P\.(?:P\.)?S\b)")


def _prose(blocks: list[str]) -> bool:
    """Whether every block is one line of prose (no list, heading, title, code or postscript),
    so its sentences can be regrouped without changing what any line is."""
    return all("\n" not in b and not _NOT_PROSE.match(b) and "```" not in b for b in blocks)


def _joined(sentences: list[str]) -> str:
    """Sentences run together as one paragraph: a space after each, none after a Chinese
    full stop."""
    return "".join(x + ("" if x[-1] in "。！？" else " ") for x in sentences).rstrip()


def _target(found: int, params: Mapping[str, Any]) -> int | None:
    """The count nearest `found` that the check's relation allows; None when none is."""
    low, high = bounds(params["relation"], int(params["n"]), params.get("upper"))
    if low > high:
        return None
    return int(low) if found < low else int(high) if found > high else found


def _divided(text: str, params: Mapping[str, Any]) -> str | None:
    """The text's paragraphs as many as the request asks, split by the divider it names
    (`***`) or else by blank lines: paragraphs of the right number by blank lines are divided
    by the named divider, and one-line prose paragraphs of the wrong number have their
    sentences regrouped, in order, into as many paragraphs of near-even length. None when the
    text already uses the divider, is not all prose, or has fewer sentences than paragraphs
    wanted (the count then needs new words)."""
    divider = (params.get("divider") or "").strip()
    if divider and count_paragraphs(text, divider) > 1:
        return None
    blocks = [b.strip() for b in _PARAGRAPH_BREAK.split(text.strip()) if b.strip()]
    want = _target(len(blocks), params)
    if want is None or want < 1:
        return None
    if want != len(blocks):
        if not _prose(blocks):
            return None
        sentences = [b[i:j] for b in blocks for i, j in _sentences(b)]
        if len(sentences) < want:
            return None
        size, extra = divmod(len(sentences), want)
        cuts = [k * size + min(k, extra) for k in range(want + 1)]
        blocks = [_joined(sentences[cuts[k]:cuts[k + 1]]) for k in range(want)]
    elif not divider or len(blocks) < 2:
        return None
    return (f"\n\n{divider}\n\n" if divider else "\n\n").join(blocks)


def _highlighted(text: str, params: Mapping[str, Any]) -> str | None:
    """The text with as many more of its sentences in bold (**like this**, which every way of
    asking for emphasis takes: asterisks, italics or bold) as the count needs: the first
    sentence of each line first (after a list or heading mark), then the next ones, in order;
    lines already holding an asterisk and code are left alone. None when the text has too many
    highlights already or too few sentences to wrap."""
    have = len(_HIGHLIGHT.findall(text))
    want = _target(have, params)
    if want is None or want <= have or "```" in text:
        return None
    first: list[tuple[int, int]] = []
    rest: list[tuple[int, int]] = []
    at = 0
    for line in text.split("\n"):
        if "*" not in line and not line.lstrip().startswith("|"):
            start = at + _LINE_MARK.match(line).end()  # type: ignore[union-attr]
            spans = [(start + i, start + j) for i, j in _sentences(text[start:at + len(line)])]
            first += spans[:1]
            rest += spans[1:]
        at += len(line) + 1
    chosen = sorted((first + rest)[:want - have])
    if len(chosen) < want - have:
        return None
    for i, j in reversed(chosen):
        text = f"{text[:i]}**{text[i:j]}**{text[j:]}"
    return text


def _paragraphs(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    divider = params.get("divider")
    how = f"separate paragraphs with a line {divider}" if divider else \
        "separate paragraphs with a blank line"
    return counted("paragraph_count", count_paragraphs(text, divider), params, "paragraphs",
                   how=how)


def _sections(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    marker = params.get("marker")
    unit = f"sections marked {marker!r}" if marker else "sections"
    how = (f"start each section on its own line with {marker} and its number, {marker} 1"
           if marker else "start each section with its own heading line")
    return counted("section_count", count_sections(text, marker), params, unit, how=how)


COUNT_KINDS: dict[str, CheckKind] = {k.name: k for k in (
    _count_kind("word_count", "the number of words (each CJK character counts one)", "words",
                count_words),
    _count_kind("char_count", "the number of Chinese characters (字数)", "Chinese characters",
                count_cjk),
    _count_kind("sentence_count", "the number of sentences", "sentences", count_sentences),
    CheckKind("paragraph_count", "paragraphs split by blank lines, or by `divider` if the "
              "request names one (such as ***)",
              params_schema(**COUNT_PROPS, divider=string(20, nullable=True)), _paragraphs,
              _divided),
    _count_kind("bullet_count", "markdown bullet items (lines opening with -, * or •)",
                "bullet points", lambda t: len(_BULLET.findall(t)), _as_bullets,
                how="each on its own line, opening with '- '"),
    _count_kind("numbered_count", "numbered list items (1. 2. 3.)", "numbered items",
                lambda t: len(_NUMBERED.findall(t)), _as_numbers,
                how="each on its own line, opening with its number: '1. ', '2. '"),
    CheckKind("section_count", "sections opening with `marker` and a number or word (SECTION 1),"
              " or with no marker, section headings", params_schema(
                  **COUNT_PROPS, marker=string(40, nullable=True)), _sections),
    _count_kind("heading_count", "markdown headings (# Title)", "headings",
                lambda t: len(_HEADING.findall(t)),
                how="a heading is a line of its own opening with '# '"),
    _count_kind("highlight_count", "highlighted spans in markdown (*text* or **text**)",
                "highlighted spans", lambda t: len(_HIGHLIGHT.findall(t)), _highlighted,
                how="wrap a key phrase of the text in asterisks, *like this*"),
    _count_kind("placeholder_count", "placeholders in square brackets ([address])",
                "placeholders", lambda t: len(_PLACEHOLDER.findall(t)),
                how="a placeholder is a word in square brackets, such as [name]"),
    _count_kind("capital_word_count", "words written all in capitals", "all-capital words",
                lambda t: len(_CAPITAL_WORD.findall(t)),
                how="words written all in capitals, LIKE THIS"),
)}
