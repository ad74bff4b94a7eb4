"""The phrasings the pre-pass knows: one regex per way of stating a requirement, each with
the function that turns its match into (kind, params). English lengths in words, Chinese in
characters (字); counts of parts; keywords; case, commas, quotes, titles, postscripts, JSON,
language, and the machine-read markers a request dictates."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rubrics.checks.language import NAMES
from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, about, to_int

Build = Callable[[re.Match[str]], list[tuple[str, dict[str, Any]]]]
_I = re.I | re.S

_AT_LEAST_EN = (r"at\s+least|no\s+less\s+than|not\s+less\s+than|no\s+fewer\s+than|"
                r"(?:a\s+)?minimum\s+(?:of\s+)?|min\.?")
_MORE_THAN_EN = r"more\s+than|over|exceed(?:ing)?|upwards\s+of|greater\s+than"
_AT_MOST_EN = (r"at\s+most|no\s+more\s+than|not\s+more\s+than|(?:a\s+)?maximum\s+(?:of\s+)?|"
               r"max\.?|up\s+to|within|not\s+(?:to\s+)?exceed(?:ing)?|limited\s+to|"
               r"no\s+longer\s+than")
_LESS_THAN_EN = r"(?:less|fewer)\s+than|under|below"
_QUALIFIER_EN = rf"{_AT_LEAST_EN}|{_MORE_THAN_EN}|{_AT_MOST_EN}|{_LESS_THAN_EN}|exactly"
_ABOUT_EN = r"about|around|approximately|approx\.?|roughly|~|some"
_DASH = r"\s*(?:-|–|—|~|～|to|and)\s*"
_N = rf"({EN_NUMBER})"
EACH_AFTER = re.compile(r"^[^.;\n]{0,12}\b(?:each|per|apiece)\b", re.I)
EACH_BEFORE = re.compile(r"\b(?:each|every|per)\b[^.;\n]{0,40}$", re.I)
EACH_ZH_AFTER = re.compile(r"^\s*/\s*(?:each|per)|^每|^/(?:篇|段|条|章)")
EACH_ZH_BEFORE = re.compile(r"每(?:段|篇|条|个|部分|章|节)[^，。；]{0,10}$")

# Whose a length or count is: the whole response's, or one named part's.
# a list item's opening: "- ", "* ", "3. ", "2) ", "1、", "(1)"
LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}\s*[.)）、](?!\d)|[(（]\d{1,2}[)）])\s*")
# "标题：", "- Opening:": a line's label, up to its first colon
LINE_LABEL = re.compile(r"^([^：:\n]{1,16}?)\s*[：:]")
# "引言（", ", a body (": the text a part's name may sit in ends at one of these
NAME_SEPARATOR = re.compile(r"[、：:；;，,]")
# labels and names under which a length is still the response's: its length, the
# requirements, the body or the main content (the response bar its title), a total
WHOLE_LABEL = re.compile(
    r"字数|篇幅|长度|要求|规范|格式|注意|备注|提示|任务|全文|全篇|整体|总(?:字数|长度|篇幅|体)|"
    r"内容|正文|主体|\blength\b|\bword\s*count\b|\bwords\b|\bsize\b|\brequirements?\b|\bformat\b|\bnote\b|"
    r"\binstructions?\b|\btask\b|\btotal\b|\boverall\b|\bcontent\b|\bbody\b", re.I)
# "全文", "in total": a length said to be the total is the response's however it is placed
TOTAL = re.compile(r"总(?:字数|长度|篇幅|计|共)|全文|全篇|整篇|合计|共计|一共|"
                   r"\b(?:total|overall|altogether|combined|in\s+all)\b", re.I)
WRITE_VERB = re.compile(r"写|创作|生成|设计|起草|制作|\b(?:write|create|draft|compose|generate|"
                        r"produce|design|prepare|craft)\b", re.I)
# what the request's first writing verb asks for: "撰写20条评价", "设计一组帖文",
# "Write 3 reviews", "write a 500-word essay" (one text)
ITEMS_ZH = re.compile(
    rf"(?:撰写|编写|拟写|写|创作|生成|设计|起草|制作)出?\s*(?:(?P<n>{ZH_NUMBER})"
    rf"(?:\s*(?:-|–|~|～|到|至)\s*{ZH_NUMBER})?\s*(?:条|篇|首|则|封|份)|"
    r"(?P<many>一组|一系列|若干|几(?:条|篇|首|则|封|份)))")
ITEMS_EN = re.compile(
    r"\b(?:write|create|draft|compose|generate|produce|design|prepare|craft)\s+"
    r"(?:me\s+|us\s+)?(?:(?P<many>a\s+(?:set|series|list|few|couple)\s+of|several|multiple)\b|"
    rf"(?P<one>an?|one|single)\b|(?P<n>{EN_NUMBER})(?:\s*(?:-|–|to)\s*{EN_NUMBER})?\s+"
    r"(?P<what>(?:[\w-]+\s+){0,3}[\w-]+))", re.I)
# counts of a response's own parts or length: "Write 3 paragraphs" asks for one text
PART_UNITS = re.compile(r"\b(?:words?|paragraphs?|sentences?|sections?|parts?|chapters?|bullets?|"
                        r"points?|lines?|verses?|stanzas?|minutes?|seconds?|pages?|characters?)\b",
                        re.I)
# "包含以下内容：1) …", "include the following: 1. …": a list of the contents to cover
CONTENTS_INTRO = re.compile(
    r"(?:包含|包括|涵盖|涉及)(?:以下|如下)(?:内容|方面|要点|几点|部分)?|"
    r"内容(?:需要|需|要|应|须)?(?:包含|包括|涵盖)\s*[：:]|"
    r"\b(?:include|cover|address)\s+the\s+following\b|"
    r"\bthe\s+following\s+(?:content|points|elements|aspects|topics)\b", re.I)
NUMBERED_ITEM = re.compile(r"(?:^|(?<=[\s：:；;。，,]))\d{1,2}\s*[)）.、](?!\d)")
CONTENTS_REACH = 300
# introductory and concluding sections asked for besides the N parts: the total is unclear
INTRO_OUTRO = re.compile(
    r"\b(?:introductory|concluding|opening|closing)\s+(?:and\s+(?:introductory|concluding|"
    r"opening|closing)\s+)?(?:sections?|parts?|chapters?|paragraphs?)\b|"
    r"\ban?\s+introduction\s+and\s+(?:a\s+)?conclusion\b|"
    r"(?:引言|前言|导语|序言|结语|结束语|尾声)(?:[和与及、](?:引言|前言|导语|结语|结束语|尾声))?"
    r"(?:部分|章节|两个部分)", re.I)
SENTENCE_END = re.compile(r"[。！？!?；;\n]|\.(?=\s)")
CLAUSE_BREAK = re.compile(r"[，,。！？!?；;\n]")


def _count(kind: str, relation: str, n: int | None, upper: int | None = None,
           **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    """One count check; the strict "more than N" and "less than N" become at least N + 1 and
    at most N - 1."""
    if n is None:
        return []
    if relation == "more than":
        relation, n = "at least", n + 1
    elif relation == "less than":
        relation, n = "at most", max(0, n - 1)
    return [(kind, {"relation": relation, "n": n, "upper": upper, **extra})]


def relation_of(qualifier: str) -> str:
    """The relation an English qualifier ("no more than", "over", "exactly") states."""
    for pattern, relation in ((_AT_LEAST_EN, "at least"), (_MORE_THAN_EN, "more than"),
                              (_AT_MOST_EN, "at most"), (_LESS_THAN_EN, "less than")):
        if re.fullmatch(pattern, " ".join(qualifier.split()), re.I):
            return relation
    return "exactly"


def _approx(kind: str, n: int | None, **extra: Any) -> list[tuple[str, dict[str, Any]]]:
    if n is None:
        return []
    low, high = about(n)
    return _count(kind, "between", low, high, **extra)


def _numbers(m: re.Match[str]) -> list[int | None]:
    """The numbers of the alternative that matched, in order."""
    return [to_int(g) for g in m.groups() if g is not None]


def _length(kind: str, relation: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        numbers = _numbers(m)
        if relation == "between":
            return _count(kind, "between", *numbers[:2])
        if relation == "about":
            return _approx(kind, numbers[0])
        return _count(kind, relation, numbers[0])
    return build


def _words(relation: str) -> Build:
    return _length("word_count", relation)


_UNITS_EN = {
    "paragraph": "paragraph_count", "bullet": "bullet_count", "bullet point": "bullet_count",
    "sentence": "sentence_count", "section": "section_count", "heading": "heading_count",
    "highlighted section": "highlight_count", "placeholder": "placeholder_count",
    "numbered item": "numbered_count", "numbered point": "numbered_count",
    "part": "section_count", "chapter": "section_count",
}
_UNIT_EN = r"(highlighted\s+sections?|bullet\s+points?|bullets?|numbered\s+(?:items?|points?)|" \
           r"paragraphs?|sentences?|sections?|headings?|placeholders?|parts?|chapters?)"


def _unit_kind(word: str) -> str:
    base = " ".join(word.lower().split()).rstrip("s")
    return _UNITS_EN.get(base, _UNITS_EN.get(base.rstrip("s"), "paragraph_count"))


def _units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    relation = relation_of(m.group(1) or "")
    kind = _unit_kind(m.group(3))
    extra: dict[str, Any] = {}
    if kind == "paragraph_count":
        extra["divider"] = None
    if kind == "section_count":
        extra["marker"] = None
    return _count(kind, relation, to_int(m.group(2)), **extra)


def _marked_sections(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    return _count("section_count", "exactly", to_int(m.group(1)), marker=m.group(2).strip())


def _flag(kind: str, **params: Any) -> Build:
    return lambda m: [(kind, dict(params))]


def _phrase(kind: str) -> Build:
    return lambda m: [(kind, {"phrase": m.group(1).strip()})] if m.group(1).strip() else []


def _keywords(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    words = re.findall(r"[\"'“‘]([^\"'”’\n]{1,60})[\"'”’]", m.group(1))
    if not words:
        words = [w for w in re.split(r",\s*|\s+and\s+|\s*、\s*|\s*和\s*", m.group(1)) if w]
    return [("keyword", {"word": w.strip(), "relation": "at least", "n": 1, "upper": None})
            for w in words if 0 < len(w.split()) <= 4]


def _forbidden_bare(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    words = re.split(r"\s*,\s*|\s+or\s+|\s+and\s+", m.group(1).strip())
    return [("forbidden_word", {"word": w}) for w in words if w]


def _word_times(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    return _count("keyword", relation_of(m.group(2) or ""), to_int(m.group(3)),
                  word=m.group(1).strip())


def _forbidden(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    words = re.findall(r"[\"'“‘]([^\"'”’\n]{1,60})[\"'”’]", m.group(1))
    return [("forbidden_word", {"word": w.strip()}) for w in words]


_LANGUAGE_BY_NAME = {name.lower(): code for code, name in NAMES.items()}
_LANGUAGE_ZH = {"英文": "en", "英语": "en", "中文": "zh", "汉语": "zh", "法语": "fr", "德语": "de",
                "西班牙语": "es", "日语": "ja", "日文": "ja", "韩语": "ko", "俄语": "ru"}


def _language(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    code = _LANGUAGE_BY_NAME.get(m.group(1).lower()) or _LANGUAGE_ZH.get(m.group(1))
    return [("language", {"language": code})] if code else []


# --- Chinese -------------------------------------------------------------------------------
_ZN = rf"({ZH_NUMBER})"
_ZH_AT_LEAST = r"不少于|不低于|至少|最少|不得少于|不能少于|不小于|不应少于|须达到|需达到"
_ZH_MORE_THAN = r"(?<!不)(?:超过|多于|大于)"
_ZH_AT_MOST = r"不超过|不多于|最多|至多|不得超过|不能超过|不要超过|不宜超过|不应超过|不大于"
_ZH_LESS_THAN = r"(?<![不得能应])(?:少于|低于|小于)"
_ZH_CHARS = r"(?:个)?(?:汉)?字(?!母|段|句|体|号|幕|条)"
_ZH_UNITS = {"段": "paragraph_count", "个段落": "paragraph_count", "段落": "paragraph_count",
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


_NOT_RANGE = r"(?<![\d～~〜到至\-–—])"
_QUOTED = r"[“\"'「『]([^”\"'」』\n]{1,80})[”\"'」』]"

RULES: tuple[tuple[re.Pattern[str], Build], ...] = tuple((re.compile(p, _I), b) for p, b in (
    # English lengths in words
    (rf"(?:between\s+)?{_N}{_DASH}{_N}\s*(?:-\s*)?words?\b", _words("between")),
    (rf"(?:{_AT_LEAST_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("at least")),
    (rf"\b(?:{_MORE_THAN_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("more than")),
    (rf"\b(?:{_LESS_THAN_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("less than")),
    (rf"{_N}\s*(?:-\s*)?words?\s+(?:or\s+more|minimum|at\s+least)\b|{_N}\+\s*(?:-\s*)?words?\b",
     _words("at least")),
    (rf"(?:{_AT_MOST_EN})\s+(?:a\s+|the\s+)?{_N}\s*(?:-\s*)?words?\b", _words("at most")),
    (rf"{_N}\s*(?:-\s*)?words?\s+(?:or\s+(?:less|fewer)|max(?:imum)?|at\s+most)\b",
     _words("at most")),
    (rf"exactly\s+{_N}\s*(?:-\s*)?words?\b", _words("exactly")),
    (rf"(?:{_ABOUT_EN})\s+{_N}\s*(?:-\s*)?words?\b", _words("about")),
    (r"(?<![\w,.\-–—~])(\d{1,3}(?:,\d{3})+|\d{2,6})(?:\s+|-)words?\b", _words("about")),
    # English counts of parts
    (rf"(?:\b({_QUALIFIER_EN}|in|of|into|with|has|have|contains?|containing|include|use|write|"
     rf"only|be|are|consist\s+of|using)\s+)({EN_NUMBER})\s+(?:separate\s+|distinct\s+|short\s+|"
     rf"markdown\s+)?{_UNIT_EN}\b", _units),
    (rf"\b({EN_NUMBER})\s+sections?[^\n]{{0,80}}?mark(?:ed)?\s+(?:the\s+beginning\s+of\s+each"
     rf"\s+section\s+)?with\s+['\"]?([A-Za-z]+)\s+X", _marked_sections),
    (rf"\bhighlight\s+({_QUALIFIER_EN})?\s*({EN_NUMBER})\s+(?:sections?|parts?|words?|phrases?|"
     r"spans?)", lambda m: _count("highlight_count", relation_of(m.group(1) or "at least"),
                                  to_int(m.group(2)))),
    (rf"\b(?:the\s+)?(?:word|keyword|phrase)\s+{_QUOTED}\s+(?:should|must|needs?\s+to)\s+"
     rf"appear\s+({_QUALIFIER_EN})?\s*({EN_NUMBER})\s+times?", _word_times),
    (rf"\bthe\s+letter\s+['\"]?([a-z])['\"]?\s+(?:should|must)\s+appear\s+({_QUALIFIER_EN})?\s*"
     rf"({EN_NUMBER})\s+times?", lambda m: _count(
         "letter_frequency", relation_of(m.group(2) or ""), to_int(m.group(3)),
         letter=m.group(1).lower())),
    (rf"\bwords\s+(?:with|in)\s+all\s+capital\s+letters\s+(?:should|must)\s+appear\s+"
     rf"({_QUALIFIER_EN})?\s*({EN_NUMBER})\s+times?", lambda m: _count(
         "capital_word_count", relation_of(m.group(1) or ""), to_int(m.group(2)))),
    (r"\brespond\s+with\s+the\s+corresponding\s+output\s+fields[^\n]*", lambda m: [
        ("field_marker", {"name": name}) for name in re.findall(
            r"\[\[\s*##\s*(\w[\w ]*?)\s*##\s*\]\]", m.group(0))]),
    (r"(?:starting|start|begin|beginning|ending|end)\s+with\s+the\s+(?:field|marker)(?:\s+for)?\s+"
     r"`?\[\[\s*##\s*(\w[\w ]*?)\s*##\s*\]\]`?|\bthe\s+(?:field|marker)(?:\s+for)?\s+"
     r"`?\[\[\s*##\s*(\w[\w ]*?)\s*##\s*\]\]`?", lambda m: [
         ("field_marker", {"name": _First(m).group(1)})]),
    (r"\b(?:in|inside|within|between|enclosed\s+in|wrapped\s+in|wrap\s+[^.<\n]{0,40}?\s+in)\s+"
     r"(?:the\s+|an?\s+)?`?<([A-Za-z][\w-]{0,30})>`?(?:\s*(?:and|\.\.\.|…)?\s*`?</\1>`?)?"
     r"(?:\s+(?:xml\s+)?tags?)?", lambda m: [("xml_tag", {"tag": m.group(1)})]),
    # English form
    (r"\b(?:all\s+|entirely\s+in\s+|only\s+)?lower\s*case(?:\s+letters)?(?:\s+only)?\b"
     r"(?=[^.\n]{0,40}(?:no\s+capital|allowed|only|\.|$))|\bno\s+capital\s+letters\b",
     _flag("lowercase")),
    (r"(?<!with )\ball\s+(?:in\s+)?(?:capital\s+letters|caps|uppercase)\b|"
     r"\bin\s+all\s+capital\s+letters\b|"
     r"\bcapital\s+letters\s+only\b|"
     r"\bentirely\s+in\s+(?:english\s+)?(?:capital|uppercase)\s+letters\b", _flag("uppercase")),
    (r"\b(?:no|without(?:\s+using)?(?:\s+any)?|refrain\s+from\s+(?:the\s+use\s+of\s+|using\s+)?(?:any\s+)?|"
     r"not?\s+use\s+(?:any\s+)?)commas?\b", _flag("no_commas")),
    (r"\bwrap\s+(?:your|the)\s+(?:entire\s+|whole\s+)?(?:response|answer|output)\s+"
     r"(?:with|in)(?:in)?\s+double\s+quot", _flag("quoted")),
    (r"double\s+angular\s+brackets|<<\s*title\s*>>", _flag("title")),
    (r"\b(P\.\s?P\.\s?S\.?|P\.\s?S\.)", lambda m: [("postscript", {
        "marker": "P.P.S" if m.group(1).upper().startswith("P.P") else "P.S."})]),
    (r"\b(?:in|as|using|use|output|return|format(?:ted)?\s+as|valid)\s+(?:a\s+|the\s+)?"
     r"(?:valid\s+)?json(?:\s+format|\s+object)?\b", _flag("json")),
    (rf"\b(?:end|finish|conclude)\s+(?:your|the)\s+(?:entire\s+)?(?:response|answer|email|letter|"
     rf"post|story|reply)\s+with\s+(?:the\s+|this\s+|that\s+)?(?:exact\s+)?(?:phrase\s+|"
     rf"sentence\s+|words\s+)?:?\s*{_QUOTED}", _phrase("ends_with")),
    (rf"\b(?:start|begin|open)\s+(?:your|the)\s+(?:entire\s+)?(?:response|answer|email|letter|"
     rf"post|story|reply)\s+with\s+(?:the\s+|this\s+|that\s+)?(?:exact\s+)?(?:phrase\s+|"
     rf"sentence\s+|words?\s+)?:?\s*{_QUOTED}", _phrase("starts_with")),
    (r"(?<!not )(?<!n't )\binclude\s+(?:the\s+)?key\s*words?\s*:?\s*"
     r"((?:[\"'“‘][^\"'”’\n]{1,60}[\"'”’]"
     r"(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)?)+)", _keywords),
    (r"(?<!not )(?<!n't )\binclude\s+(?:the\s+)?key\s*words?\s+"
     r"((?:[A-Za-z][\w-]*(?:\s*,\s*|\s+and\s+|,\s+and\s+)?)"
     r"{1,8})\s+in\s+(?:the|your)\s+response", _keywords),
    (r"\bdo\s+not\s+include\s+(?:the\s+)?key\s*words?\s+((?:[A-Za-z][\w-]*(?:\s*,\s*|\s+or\s+|"
     r"\s+and\s+)?){1,8})\s+in\s+(?:the|your)\s+response", _forbidden_bare),
    (r"\b(?:do\s+not|don't|never|avoid)\s+(?:use|include|mention|using)\s+(?:the\s+)?"
     r"(?:words?|key\s*words?|phrases?|terms?)\s*:?\s*((?:[\"'“‘][^\"'”’\n]{1,60}[\"'”’]"
     r"(?:\s*,\s*|\s+(?:or|and)\s+|\s*,\s*(?:or|and)\s+)?)+)", _forbidden),
    (r"\b(?:respond|write|answer|reply|response\s+should\s+be)\s+(?:only\s+|entirely\s+)?"
     r"in\s+(English|Chinese|French|German|Spanish|Japanese|Korean|Russian|Italian|Portuguese)"
     r"(?:\s+language)?\b", _language),
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
    # Chinese counts of parts
    (rf"(?:分为|分成|包括|包含|共|分|划分为)\s*{_ZN}\s*(个部分|部分|段落|个段落|个章节|个小标题|"
     r"段|句话)", _zh_units),
    (rf"(?:分为|分成|包含|包括|按|按照|要求|涵盖)[^。；\n]{{1,60}}?(?<![每第]){_ZN}\s*(个部分|个板块|"
     r"大板块|个章节)", _zh_units),
    (r"((?:[‘'“\"][^’'”\"\n]{1,20}[’'”\"][、，,和及与]?\s*)+)等?(?:关键词|关键字)", _keywords),
    (rf"(?:分为|分成|共)\s*{_ZN}\s*(?:-|–|~|～|到|至)\s*{_ZN}\s*个?(?:自然)?(?:段落|段)",
     lambda m: _count("paragraph_count", "between", *_numbers(m)[:2], divider=None)),
    # Chinese form
    (rf"以\s*{_QUOTED}\s*(?:作为|作)?(?:结尾|结束|收尾)|结尾(?:处)?(?:要|需|需要|必须|请)?"
     rf"(?:写上|加上|是|为|以)\s*{_QUOTED}", lambda m: _phrase("ends_with")(_First(m))),
    (rf"以\s*{_QUOTED}\s*(?:作为|作)?(?:开头|开始|开篇)|开头(?:要|需|需要|必须|请)?"
     rf"(?:写上|是|为|以)\s*{_QUOTED}", lambda m: _phrase("starts_with")(_First(m))),
    (r"不(?:要|能|得)?(?:使用|用|出现|包含|含有)(?:任何)?逗号", _flag("no_commas")),
    (r"(?:以|用|使用|输出为|返回)\s*JSON\s*(?:格式|形式)?|JSON\s*格式(?:输出|返回|回复)",
     _flag("json")),
    (r"(?:用|使用|以)(英文|英语|中文|汉语|法语|德语|西班牙语|日语|日文|韩语|俄语)(?:来)?"
     r"(?:写|撰写|回答|回复|输出|书写|作答|完成)", _language),
    (r"<<[^<>]*>>.{0,8}标题|标题.{0,12}<<", _flag("title")),
))


class _First:
    """A match whose group(1) is the first group that matched (alternations that quote)."""

    def __init__(self, match: re.Match[str]) -> None:
        self._match = match

    def group(self, _: int) -> str:
        return next((g for g in self._match.groups() if g), "")
