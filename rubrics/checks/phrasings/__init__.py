"""The phrasings the pre-pass knows: one regex per way of stating a requirement, each with
the function that turns its match into (kind, params). English lengths in words, Chinese in
characters (字); counts of parts; keywords; case, commas, quotes, titles, postscripts, JSON,
language, and the machine-read markers a request dictates: XML tags, and every [[ ## name ## ]]
field marker it writes, bar a DSPy-style prompt's input fields and a marker asked about."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.case import RULES as CASE_RULES
from rubrics.checks.phrasings.common import (
    _ABOUT_EN,
    _AT_LEAST_EN,
    _AT_MOST_EN,
    _DASH,
    _I,
    _LESS_THAN_EN,
    _MORE_THAN_EN,
    _N,
    _PART_ADJECTIVE_EN,
    _QUALIFIER_EN,
    _UNIT_EN,
    _ZH_AT_LEAST,
    _ZH_AT_MOST,
    _ZH_LESS_THAN,
    _ZH_MORE_THAN,
    UNITS_GATE,
    WORDS_GATE,
    Build,
    Matcher,
    _count,
    _flag,
    _length,
    _numbers,
    _unit_range,
    _units,
    _words,
    compile_rules,
    relation_of,
)
from rubrics.checks.phrasings.counted import RULES as COUNTED_RULES
from rubrics.checks.phrasings.edges import RULES as EDGE_RULES
from rubrics.checks.phrasings.language import LANGUAGE_NAMES
from rubrics.checks.phrasings.language import RULES as LANGUAGE_RULES
from rubrics.checks.phrasings.lengths import RULES as LENGTH_RULES
from rubrics.checks.phrasings.marks import RULES as MARK_RULES
from rubrics.checks.phrasings.short import (
    _BULLETS_EN,
    _LIST_VERBS_EN,
    _NOT_RANGE_EN,
    _TIMES_EN,
    _WHOLE_EN,
    _ZH_BULLETS,
    _ZH_ITEM,
    _ZH_NUMBERED,
    PART_OF,
    _hyphen_units,
    _letter_times,
    _limited,
    _list_items,
    _units_bounded,
    _zh_sentences,
)
from rubrics.checks.phrasings.words import RULES as WORD_RULES
from rubrics.checks.phrasings.words_zh import RULES as WORD_ZH_RULES

# --- Chinese -------------------------------------------------------------------------------
_ZN = rf"({ZH_NUMBER})"
_ZH_CHARS = r"(?:个)?(?:汉)?字(?!母|段|句|体|号|幕|条)"
_ZH_UNITS = {"段": "paragraph_count", "个段落": "paragraph_count", "段落": "paragraph_count",
             "个自然段": "paragraph_count", "自然段": "paragraph_count",
             "个部分": "section_count", "部分": "section_count", "个章节": "section_count",
             "章": "section_count", "个小标题": "heading_count", "句话": "sentence_count",
             "个板块": "section_count", "大板块": "section_count",
             "句": "sentence_count"}


def _zh_chars(relation: str) -> Build:
    return _length("char_count", relation)


def _zh_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    kind = _ZH_UNITS[m.group(2)]
    extra: dict[str, Any] = {"divider": None} if kind == "paragraph_count" else (
        {"marker": None} if kind == "section_count" else {})
    return _count(kind, "exactly", to_int(m.group(1)), **extra)


# "分" as "divide into" ("分4-5个自然段"), not inside 部分, 满分, 评分, 充分, 十分, 百分
_ZH_DIVIDE = r"(?<![部满评充十百得积])分"
_NOT_RANGE = r"(?<![\d～~〜到至\-–—])"
_QUOTED = r"[“\"'「『]([^”\"'」』\n]{1,80})[”\"'」』]"

# --- machine-read field markers: "[[ ## answer ## ]]"
# the names a DSPy-style prompt lists as its inputs ("Your input fields are: 1. `question`"),
# and its sentence naming the fields to answer with
_INPUT_FIELDS = re.compile(r"\binput\s+fields?\s*(?:are|is)?\s*:(?P<names>.*?)(?:\boutput\s+fields?"
                           r"\b|$)", re.I | re.S)
_OUTPUT_FIELDS = re.compile(r"\brespond\s+with\s+the\s+corresponding\s+output\s+fields[^\n]*",
                            re.I)
# a sentence describing the user's own template: "My prompt template uses markers like ..."
_OWN_TEMPLATE = re.compile(r"(?:^|[.!?\n]\s*)(?:my|our)\s+[^.!?\n]*$", re.I)


def _field(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A field marker the request writes is one the response must keep, wherever it is
    written (a layout, a list of fields, "under a [[ ## answer ## ]] line"); not an input
    field of a DSPy-style prompt, nor a marker in a sentence about the user's own template."""
    text, name = m.string, " ".join(m.group("name").split())
    asked = _OUTPUT_FIELDS.search(text)
    if asked and not asked.start() <= m.start() < asked.end():
        return []
    inputs = _INPUT_FIELDS.search(text)
    if inputs and re.search(rf"`{re.escape(name)}`", inputs.group("names")):
        return []
    if _OWN_TEMPLATE.search(text, max(0, m.start() - 80), m.start()):
        return []
    return [("field_marker", {"name": name})]


def _numbered_points(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Points said to be numbered after their count: "4 points, numbered from 1", "3 or more
    points, each one numbered"."""
    relation = "at least" if m.group("more") else relation_of(m.group("q") or "")
    return _count("numbered_count", relation, to_int(m.group("n")))


_OWN_RULES: tuple[tuple[Matcher, Build], ...] = compile_rules((
    # English lengths in words
    (rf"(?:between\s+)?{_N}{_DASH}{_N}\s*(?:-\s*)?words?\b", _words("between"), *WORDS_GATE),
    (rf"(?:{_AT_LEAST_EN})\s*{_N}\s*(?:-\s*)?words?\b", _words("at least"), *WORDS_GATE),
    (rf"\b(?:{_MORE_THAN_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("more than"), *WORDS_GATE),
    (rf"\b(?:{_LESS_THAN_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("less than"), *WORDS_GATE),
    (rf"{_N}\s*(?:-\s*)?words?\s+(?:or\s+more|minimum|at\s+least)\b|{_N}\+\s*(?:-\s*)?words?\b",
     _words("at least"), *WORDS_GATE),
    (rf"(?:{_AT_MOST_EN})\s*(?:a\s+|the\s+)?{_N}\s*(?:-\s*)?words?\b", _words("at most"),
     *WORDS_GATE),
    (rf"{_N}\s*(?:-\s*)?words?\s+(?:or\s+(?:less|fewer)|max(?:imum)?|at\s+most)\b",
     _words("at most"), *WORDS_GATE),
    (rf"(?:exactly|precisely)\s+{_N}\s*(?:-\s*)?words?\b", _words("exactly"), *WORDS_GATE),
    (rf"(?:{_ABOUT_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("about"), *WORDS_GATE),
    # (not the length of a text the request gives: "translate these 20 words", "summarize this
    # 2000-word article")
    (r"(?<![\w,.\-–—~])(?<!these\s)(?<!those\s)(?<!the\s)(?<!this\s)(?<!that\s)(?<!my\s)"
     r"(?<!our\s)(?<!his\s)(?<!her\s)(?<!their\s)(?<!list\sof\s)(\d{1,3}(?:,\d{3})+|\d{2,6})"
     r"(?:\s+|-)words?\b(?!\s+(?:that|which|from|related|starting|beginning|ending|in\s+(?:"
     rf"{LANGUAGE_NAMES})\b))", _words("about"), *WORDS_GATE),
    # English counts of parts ("3 sentences or fewer" before "in 3 sentences": the longer
    # reading wins)
    (rf"(?:\b\w+\s+)?{_NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{_UNIT_EN[1:-1]})\s+"
     r"(?:or\s+(?:fewer|less)|at\s+most|max(?:imum)?|tops)\b", _units_bounded("at most"),
     *UNITS_GATE),
    (rf"(?:\b\w+\s+)?{_NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{_UNIT_EN[1:-1]})\s+"
     r"(?:or\s+more|at\s+least|minimum)\b", _units_bounded("at least"), *UNITS_GATE),
    (rf"(?:\b({_QUALIFIER_EN}|in|as|of|into|with|has|have|contains?|containing|include|use|write|"
     rf"only|be|are|consist\s+of|using)\s+)({EN_NUMBER})\s+(?:{_PART_ADJECTIVE_EN}\s+)?"
     rf"{_UNIT_EN}\b(?!\s+(?:headings?|headers?|titles?|breaks?|names?)\b)", _units, *UNITS_GATE),
    (rf"(?:\b(?:in|into|of|with|has|have|contains?|containing|include|use|write|be|using|"
     rf"consist\s+of|between)\s+|(?<=\())\s*{_N}{_DASH}{_N}\s+(?:{_PART_ADJECTIVE_EN}\s+)?"
     r"(paragraphs|sentences|sections|parts|chapters)\b", _unit_range),
    (rf"\bthe\s+letter\s+['\"]?([a-z])['\"]?\s+(?:should|must)\s+appear\s+({_QUALIFIER_EN})?\s*"
     rf"({EN_NUMBER})\s+times?", lambda m: _count(
         "letter_frequency", relation_of(m.group(2) or ""), to_int(m.group(3)),
         letter=m.group(1).lower())),
    (r"\[\[\s*##\s*(?P<name>\w[\w ]{0,38}?)\s*##\s*\]\]", _field),
    (r"\b(?:in|inside|within|between|enclosed\s+in|wrapped\s+in|wrap\s+[^.<\n]{0,40}?\s+in)\s+"
     r"(?:the\s+|an?\s+)?`?<([A-Za-z][\w-]{0,30})>`?(?:\s*(?:and|\.\.\.|…)?\s*`?</\1>`?)?"
     r"(?:\s+(?:xml\s+)?tags?)?", lambda m: [("xml_tag", {"tag": m.group(1)})]),
    # English lists, hyphenated lengths, bounds after the unit, repeated words and letters
    # ("a 4-item bulleted list", "a five-step numbered list")
    (rf"(?<![\w-])(?P<n>{EN_NUMBER})[\s-](?:items?|points?|entry|entries|steps?|lines?|tips?)\s+"
     r"(?P<list>bullet(?:ed)?(?:[\s-]*point)?|numbered|(?:un)?ordered|markdown|dash(?:ed)?)\s+list(?P<q>)",
     _list_items),
    (rf"{_NOT_RANGE_EN}(?:\b(?P<q>{_QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:markdown\s+|"
     r"short\s+|separate\s+|distinct\s+)?(?P<list>bullet(?:ed)?[\s-]*points?|bullets|"
     r"bulleted\s+(?!lists?\b)\w+|numbered\s+(?!lists?\b)\w+)", _list_items, *UNITS_GATE),
    (rf"\b(?:{_LIST_VERBS_EN})(?:\s+(?:me|us))?\s+(?:(?P<q>{_QUALIFIER_EN})\s+)?"
     rf"(?P<n>{EN_NUMBER})\s+(?!(?:paragraphs?|sentences?|sections?|words?|parts?|chapters?|"
     r"lines?|times?)\b)[^.;:!?\n]{1,60}?\b(?:as|in|using|with|via|formatted\s+as|in\s+the\s+"
     rf"form\s+of)\s+(?:a\s+|an\s+)?(?:markdown\s+)?(?P<list>{_BULLETS_EN})\b", _list_items),
    (rf"\b(?P<list>bullet(?:ed)?(?:[\s-]*point)?|numbered|markdown)\s+list\s+(?:of|with|"
     rf"containing)\s+(?:(?P<q>{_QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})\s+\w+", _list_items),
    (rf"{_NOT_RANGE_EN}\b(?:(?P<q>{_QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})(?P<more>\s+or\s+more)?\s+"
     r"(?:points|items|steps|reasons|tips|ideas|entries)\b[,\s][^.;:\n]{0,25}?\b(?:numbered|"
     r"number\s+them)\b", _numbered_points),
    (rf"\bnumbered\s+list\s+(?:that|which)\s+(?:stops|ends|finishes)\s+(?:at|with)\s+item\s+"
     rf"(?P<n>{EN_NUMBER})\b", lambda m: _count("numbered_count", "exactly", to_int(m.group("n")))),
    (rf"(?<![\w-])(?P<n>{EN_NUMBER})-(?P<unit>sentence|paragraph|bullet(?:[\s-]point)?)s?\b(?!-)",
     _hyphen_units),
    (rf"\b(?:limit|keep|restrict|cap)\s+(?:{_WHOLE_EN})\s+to\s+(?:just\s+|only\s+)?"
     rf"(?P<n>{EN_NUMBER})\s+(?P<unit>words?|{_UNIT_EN[1:-1]})\b", _limited),
    (r"\b(?:the\s+)?letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+(?:(?:should|must|needs?\s+to|"
     r"has\s+to|to|will)\s+)?(?:appears?|occurs?|(?:be|is)\s+used|shows?\s+up)\s+"
     rf"{_TIMES_EN}", _letter_times),
    (r"\b(?:use|include|using|including)\s+the\s+letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+"
     rf"{_TIMES_EN}", _letter_times),
    # English form
    (r"\b(?:no|without(?:\s+using)?(?:\s+any)?|refrain\s+from\s+(?:the\s+use\s+of\s+|(?:using|employing|utili[sz]ing|including|adding)\s+)?(?:any\s+)?|"
     r"not?\s+use\s+(?:any\s+)?)commas?\b", _flag("no_commas")),
    (r"\b(?:no|zero|without|avoid(?:ing)?|leave\s+out|omit|(?:do\s+not|don['’]t|must\s+not|"
     r"should\s+not|never|cannot|can['’]t)\s+(?:use|include|contain|put|add|have)|refrain\s+from"
     r"\s+using)\s+(?:(?:any|all|using|the\s+use\s+of|a\s+single|a|the)\s+)*commas?\b|"
     r"\bcomma-free\b",
     _flag("no_commas")),
    (r"\bcommas?\s+(?:are|is)\s+(?:strictly\s+|absolutely\s+)?(?:not\s+(?:allowed|permitted|"
     r"to\s+be\s+used)|forbidden|banned|prohibited|off[\s-]limits)|\bcommas?\s+(?:must|should|"
     r"may|can)\s*(?:not|n['’]t)\s+(?:be\s+used|appear)|逗号(?:一律)?(?:不得|不能|不要|不可|禁止)"
     r"(?:使用|出现)", _flag("no_commas")),
    (r"(?<![A-Za-z])(P\.\s?P\.\s?S\.?|P\.\s?S\.)", lambda m: [("postscript", {
        "marker": "P.P.S" if m.group(1).upper().startswith("P.P") else "P.S."})]),
    (r"\b(?:in|as|using|use|output|return|format(?:ted)?\s+as|valid)\s+(?:only\s+|just\s+|"
     r"pure\s+|raw\s+|strictly\s+)?(?:a\s+|the\s+)?(?:(?:valid|single)\s+)?json(?:\s+format|"
     r"\s+object)?\b",
     _flag("json")),
    # Chinese lengths in characters
    (rf"{_ZN}\s*(?:{_ZH_CHARS})?\s*(?:-|–|—|~|～|〜|到|至)\s*{_ZN}\s*{_ZH_CHARS}",
     _zh_chars("between")),
    (rf"(?:{_ZH_AT_LEAST})\s*{_ZN}\s*{_ZH_CHARS}|{_ZN}\s*{_ZH_CHARS}(?:以上|起)",
     _zh_chars("at least")),
    (rf"(?:{_ZH_MORE_THAN})\s*{_ZN}\s*{_ZH_CHARS}", _zh_chars("more than")),
    (rf"(?:{_ZH_LESS_THAN})\s*{_ZN}\s*{_ZH_CHARS}", _zh_chars("less than")),
    (rf"(?:{_ZH_AT_MOST})\s*{_ZN}\s*{_ZH_CHARS}|{_ZN}\s*{_ZH_CHARS}(?:以内|以下|之内)|"
     rf"(?:控制|限制|限定)在\s*{_ZN}\s*{_ZH_CHARS}(?:以内|之内|以下|内)",
     _zh_chars("at most")),
    (rf"(?:约|大约|大概|左右)\s*{_ZN}\s*{_ZH_CHARS}|{_NOT_RANGE}{_ZN}\s*{_ZH_CHARS}\s*(?:左右|上下)|"
     rf"(?:字数|篇幅|长度)(?:要求|控制|限制|保持|大约|大概|为|在|是|约|：|:|\s)*{_ZN}\s*{_ZH_CHARS}"
     r"(?![以内之下左上])|"
     rf"(?:一篇|一份|一段|写|撰写)\s*(\d+)\s*{_ZH_CHARS}(?:的|之)", _zh_chars("about")),
    (rf"(?:{_ABOUT_EN})\s*{_ZN}\s*{_ZH_CHARS}", _zh_chars("about")),
    # Chinese counts of parts
    (rf"(?:分为|分成|包括|包含|共|分|划分为)\s*{_ZN}\s*(个部分|部分|段落|个段落|个自然段|自然段|"
     r"个章节|个小标题|段|句话)", _zh_units),
    (rf"(?:分为|分成|包含|包括|按|按照|要求|涵盖)[^。；\n]{{1,60}}?(?<![每第]){_ZN}\s*(个部分|个板块|"
     r"大板块|个章节)", _zh_units),
    (rf"{_NOT_RANGE}(?<![第每])(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})\s*)?(?P<n>{ZH_NUMBER})\s*"
     rf"{_ZH_ITEM}(?!\s*(?:{_ZH_BULLETS}|{_ZH_NUMBERED}))[^。；！？\n]{{0,30}}?"
     rf"(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})", _list_items),
    (rf"(?:用|使用|以|采用)\s*(?:一个|一份)?\s*(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})"
     rf"[^。；！？\n]{{0,12}}?{_NOT_RANGE}(?<![第每])(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})\s*)?"
     rf"(?P<n>{ZH_NUMBER})\s*{_ZH_ITEM}",
     _list_items),
    (rf"(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})|用|以|限|仅用|只用|(?:控制|限定|限制|保持)在)\s*(?P<n>{ZH_NUMBER})\s*"
     r"句话(?P<within>以内|之内|以下)?", _zh_sentences),
    (rf"(?:分为|分成|共|{_ZH_DIVIDE})\s*{_ZN}\s*(?:-|–|~|～|到|至)\s*{_ZN}\s*个?(?:自然)?"
     r"(?:段落|段)",
     lambda m: _count("paragraph_count", "between", *_numbers(m)[:2], divider=None)),
    # Chinese form
    (r"不(?:要|能|得|准|许|可)?(?:使用|用|出现|包含|含有)(?:任何)?逗号", _flag("no_commas")),
    (r"(?:避免|禁止|不允许|不许)(?:使用|出现)?(?:任何)?逗号|不(?:能|要|得|可)?(?:带|有|含)逗号",
     _flag("no_commas")),
    (r"(?:以|用|使用|输出为|返回)\s*JSON\s*(?:格式|形式)?|JSON\s*格式(?:的)?\s*(?:输出|返回|回复|回答|结果)|"
     r"(?:输出|回答|回复|结果|返回)(?:内容|结果)?(?:必须|需要|需|应|要|应该)?(?:是|为)(?:合法|有效|标准|规范)?的?"
     r"\s*JSON",
     _flag("json")),
), _I)


RULES: tuple[tuple[Matcher, Build], ...] = (
    *_OWN_RULES, *LANGUAGE_RULES, *CASE_RULES, *EDGE_RULES, *MARK_RULES, *WORD_RULES,
    *WORD_ZH_RULES, *LENGTH_RULES, *COUNTED_RULES)

__all__ = ["PART_OF", "RULES"]
