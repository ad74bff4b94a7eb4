"""Count kinds: words, Chinese characters, sentences, paragraphs, list items, sections,
headings, highlighted spans, placeholders and capitalised words, each against a relation. A
list of the right length in the other style (numbered for bullets, bullets for numbers) is
restyled as the `conform` of the list kinds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rubrics.checks.base import (
    COUNT_PARAMS,
    COUNT_PROPS,
    CheckKind,
    CheckOutcome,
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
    body = _ABBREVIATION.sub(lambda m: m.group(0).replace(".", "\u2024"), body)
    parts = _SENTENCE_END.split(body)
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


def _divided(text: str, params: Mapping[str, Any]) -> str | None:
    """The text's paragraphs split by the divider the request names (`***`) instead of blank
    lines, when it has none of the divider and the right number of paragraphs by blank lines;
    None otherwise (a count the text misses needs new words)."""
    divider = (params.get("divider") or "").strip()
    if not divider or count_paragraphs(text, divider) > 1:
        return None
    found = count_paragraphs(text)
    if found < 2 or not relation_holds(found, params["relation"], int(params["n"]),
                                       params.get("upper")):
        return None
    blocks = [b.strip("\n") for b in _PARAGRAPH_BREAK.split(text.strip("\n")) if b.strip()]
    return f"\n\n{divider}\n\n".join(blocks)


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
                "highlighted spans", lambda t: len(_HIGHLIGHT.findall(t)),
                how="wrap a key phrase of the text in asterisks, *like this*"),
    _count_kind("placeholder_count", "placeholders in square brackets ([address])",
                "placeholders", lambda t: len(_PLACEHOLDER.findall(t)),
                how="a placeholder is a word in square brackets, such as [name]"),
    _count_kind("capital_word_count", "words written all in capitals", "all-capital words",
                lambda t: len(_CAPITAL_WORD.findall(t)),
                how="words written all in capitals, LIKE THIS"),
)}
