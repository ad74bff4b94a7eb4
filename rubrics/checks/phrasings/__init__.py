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


# words between a count and its unit: "three main parts", "4 separate sections"
_PART_ADJECTIVE_EN = r"(?:separate|distinct|short|markdown|main|major|key|core|primary|clear)"


def _unit_kind(word: str) -> str:
    base = " ".join(word.lower().split()).rstrip("s")
    return _UNITS_EN.get(base, _UNITS_EN.get(base.rstrip("s"), "paragraph_count"))


def _unit_extra(kind: str) -> dict[str, Any]:
    """The unset parameter a count of paragraphs (divider) or sections (marker) carries."""
    return {"paragraph_count": {"divider": None}, "section_count": {"marker": None}}.get(kind, {})


def _units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    relation = relation_of(m.group(1) or "")
    kind = _unit_kind(m.group(3))
    return _count(kind, relation, to_int(m.group(2)), **_unit_extra(kind))


def _unit_range(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A range of parts: "in 4-5 paragraphs", "between 3 and 5 sections"."""
    kind = _unit_kind(m.group(3))
    return _count(kind, "between", to_int(m.group(1)), to_int(m.group(2)), **_unit_extra(kind))


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


# --- Lists, repeated words, letters, capitals, closing phrases: the usual ways short
# instruction-following requests state them ---------------------------------------------------
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
# a check of the key's kind read from words inside a longer check of one of the listed kinds
# is a misreading: the "in all capital letters" of "use words in all capital letters at least
# 2 times" asks for capitalised words, not a response all in capitals
PART_OF = {"uppercase": frozenset({"capital_word_count"})}
# one quoted word or phrase, quotes paired; a list of them joined by commas, "and", "or", 、
_QUOTE_ITEM = (r"(?:\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|'[^'\n]{1,80}'(?!\w)|‘[^’\n]{1,80}’|"
               r"「[^」\n]{1,80}」|『[^』\n]{1,80}』)")
_QUOTE_INSIDE = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|'([^'\n]{1,80})'(?!\w)|"
                           r"‘([^’\n]{1,80})’|「([^」\n]{1,80})」|『([^』\n]{1,80})』")
_QUOTE_LIST = (rf"{_QUOTE_ITEM}(?:(?:\s*[,，、]\s*|\s+(?:or|and|nor)\s+|\s*,\s*(?:or|and|nor)\s+|"
               rf"\s*[和或及与]\s*){_QUOTE_ITEM})*")
# a count of occurrences: "3 times", "at least once", "twice"
_TIMES_EN = (rf"(?:(?P<q>{_QUALIFIER_EN})\s+)?(?:(?P<n>{EN_NUMBER})\s+times?\b|"
             r"(?P<t>once|twice|thrice)\b)")
# a number that is not the end of a range ("3-5 bullets", "between 3 and 5 bullets")
_NOT_RANGE_EN = r"(?<![-–—~/\d])(?<!\bto\s)(?<!\bor\s)(?<!\band\s)"
# a thing said of each of several: "a one-sentence caption for each photo"
_EACH_LATER = re.compile(r"[^.;\n]{0,40}?\b(?:each|every|per)\b", re.I)
# the same, stated earlier in the sentence: "for each product, list 3 features as bullets",
# "每张海报用列表列出三个卖点"
_EACH_EARLIER = re.compile(r"(?:\b(?:each|every|per)\b|每)[^.;!?。；！？\n]{0,60}$", re.I)
_LIST_VERBS_EN = (r"list|give|name|provide|share|write|suggest|offer|outline|present|summari[sz]e|"
                  r"describe|explain|recommend|identify|create|generate|include|make")
_BULLETS_EN = (r"bullet(?:ed)?[\s-]*(?:points?|list|items?)|bullets|numbered\s+(?:list|items?|"
               r"points?)|markdown\s+list")
# what a whole response is limited to: "limit your answer to 3 sentences"
_WHOLE_EN = (r"it|(?:your|the)\s+(?:\w+\s+)?(?:response|answer|reply|essay|text|output|post|"
             r"story|summary|description|message|note)")
_LANGUAGES_EN = r"English|Chinese|French|German|Spanish|Japanese|Korean|Russian|Italian|Portuguese"
_LANGUAGES_ZH = r"英文|英语|中文|汉语|法语|德语|西班牙语|日语|日文|韩语|俄语"
_ZH_ITEM = r"(?:个|条|点|项)"
_ZH_BULLETS = r"(?:markdown|md)?\s*(?:无序)?(?<!有序)(?<!编号)(?<!编号的)列表|项目符号|圆点符号"
_ZH_NUMBERED = (r"(?:(?:阿拉伯)?数字|序号)\s*(?:编号|标号|标注|列出|排列)|编号列出|有序列表|"
                r"编号列表|编号的列表|带编号|加编号|标上序号|标明序号")


def quoted_words(text: str) -> list[str]:
    """The words or phrases quoted in `text`, quotes removed, in order."""
    return [next(g for g in groups if g).strip() for groups in _QUOTE_INSIDE.findall(text)]


def _times(m: re.Match[str]) -> int | None:
    """The count an occurrence phrase states ("3 times", "twice"); None if it states none."""
    if m.group("n"):
        return to_int(m.group("n"))
    return _TIMES[m.group("t").lower()] if m.group("t") else None


def _keyword_times(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Each quoted word must appear: at least once, or as often as the request says."""
    n = _times(m)
    relation = relation_of(m.group("q") or "") if n is not None else "at least"
    return [check for word in quoted_words(m.group("words"))
            for check in _count("keyword", relation, 1 if n is None else n, word=word)]


def _forbidden_quoted(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Each quoted word must not appear."""
    return [("forbidden_word", {"word": word}) for word in quoted_words(m.group("words"))]


def _letter_times(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How often one letter must appear."""
    return _count("letter_frequency", relation_of(m.group("q") or ""), _times(m),
                  letter=m.group("letter").lower())


def _capital_words(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How many words written all in capitals the response must have."""
    n = _times(m) if "t" in m.groupdict() else to_int(m.group("n"))
    return _count("capital_word_count", relation_of(m.group("q") or ""), n)


def _list_kind(words: str) -> str:
    """numbered_count for numbered items, bullet_count for bullets or an unnumbered list."""
    numbered = re.search(r"number|编号|序号|有序", words, re.I)
    return "numbered_count" if numbered else "bullet_count"


def zh_relation_of(qualifier: str) -> str:
    """The relation a Chinese qualifier ("至少", "不超过") states; "exactly" if none."""
    for pattern, relation in ((_ZH_AT_LEAST, "at least"), (_ZH_MORE_THAN, "more than"),
                              (_ZH_AT_MOST, "at most"), (_ZH_LESS_THAN, "less than")):
        if qualifier and re.fullmatch(pattern, qualifier):
            return relation
    return relation_of(qualifier)


def _list_items(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of items the request says are bullets, numbered or a list; not when they are
    those of each of several parts. A Chinese 一 is the article "a" ("一个列表"), not a
    count."""
    if m.group("n").strip() == "一" or _EACH_EARLIER.search(m.string, 0, m.start()):
        return []
    return _count(_list_kind(m.group("list")), zh_relation_of(m.group("q") or ""),
                  to_int(m.group("n")))


def _hyphen_units(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A length in a hyphenated adjective ("a two-sentence note", "a 3-paragraph essay"):
    exactly that many; not when the text is one of several ("a one-sentence caption for each
    photo")."""
    if _EACH_LATER.match(m.string, m.end()):
        return []
    kind = _unit_kind(m.group("unit").replace("-", " "))
    extra: dict[str, Any] = {"divider": None} if kind == "paragraph_count" else {}
    return _count(kind, "exactly", to_int(m.group("n")), **extra)


def _units_bounded(relation: str) -> Build:
    """A bound on a count of parts ("3 sentences or fewer", "limit it to 3 paragraphs")."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        kind = _unit_kind(m.group("unit"))
        extra: dict[str, Any] = {}
        if kind == "paragraph_count":
            extra["divider"] = None
        if kind == "section_count":
            extra["marker"] = None
        return _count(kind, relation, to_int(m.group("n")), **extra)
    return build


def _limited(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """At most N words or parts: "limit your answer to N words / sentences"."""
    if m.group("unit").lower().startswith("word"):
        return _count("word_count", "at most", to_int(m.group("n")))
    return _units_bounded("at most")(m)


def _closing(kind: str) -> Build:
    """The phrase a response must open or close with, quotes removed."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        raw = m.group("phrase")
        phrase = (quoted_words(raw) or [raw])[0].strip()
        return [(kind, {"phrase": phrase})] if phrase else []
    return build


def _zh_sentences(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of sentences: "用三句话", "不超过两句话", "三句话以内"."""
    relation = "at most" if m.group("within") else zh_relation_of(m.group("q") or "")
    return _count("sentence_count", relation, to_int(m.group("n")))


def _keyword_zh(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Each quoted word must appear: at least once, or as often as "出现N次" says."""
    groups = m.groupdict()
    n = to_int(groups["n"]) if groups.get("n") else None
    relation = zh_relation_of(groups.get("q") or groups.get("q2") or "") if n else "at least"
    return [check for word in quoted_words(m.group("words"))
            for check in _count("keyword", relation, n or 1, word=word)]


# --- Chinese -------------------------------------------------------------------------------
_ZN = rf"({ZH_NUMBER})"
_ZH_AT_LEAST = r"不少于|不低于|至少|最少|不得少于|不能少于|不小于|不应少于|须达到|需达到"
_ZH_MORE_THAN = r"(?<!不)(?:超过|多于|大于)"
_ZH_AT_MOST = r"不超过|不多于|最多|至多|不得超过|不能超过|不要超过|不宜超过|不应超过|不大于"
_ZH_LESS_THAN = r"(?<![不得能应])(?:少于|低于|小于)"
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
    # English counts of parts ("3 sentences or fewer" before "in 3 sentences": the longer
    # reading wins)
    (rf"(?:\b\w+\s+)?{_NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{_UNIT_EN[1:-1]})\s+"
     r"(?:or\s+(?:fewer|less)|at\s+most|max(?:imum)?)\b", _units_bounded("at most")),
    (rf"(?:\b\w+\s+)?{_NOT_RANGE_EN}\b(?P<n>{EN_NUMBER})\s+(?P<unit>{_UNIT_EN[1:-1]})\s+"
     r"(?:or\s+more|at\s+least|minimum)\b", _units_bounded("at least")),
    (rf"(?:\b({_QUALIFIER_EN}|in|of|into|with|has|have|contains?|containing|include|use|write|"
     rf"only|be|are|consist\s+of|using)\s+)({EN_NUMBER})\s+(?:{_PART_ADJECTIVE_EN}\s+)?"
     rf"{_UNIT_EN}\b", _units),
    (rf"\b(?:in|into|of|with|has|have|contains?|containing|include|use|write|be|using|"
     rf"consist\s+of|between)\s+{_N}{_DASH}{_N}\s+(?:{_PART_ADJECTIVE_EN}\s+)?"
     r"(paragraphs|sentences|sections|parts|chapters)\b", _unit_range),
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
    # English lists, hyphenated lengths, bounds after the unit, repeated words and letters
    (rf"{_NOT_RANGE_EN}(?:\b(?P<q>{_QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:markdown\s+|"
     r"short\s+|separate\s+|distinct\s+)?(?P<list>bullet(?:ed)?[\s-]*points?|bullets|"
     r"bulleted\s+(?!lists?\b)\w+|numbered\s+(?!lists?\b)\w+)", _list_items),
    (rf"\b(?:{_LIST_VERBS_EN})(?:\s+(?:me|us))?\s+(?:(?P<q>{_QUALIFIER_EN})\s+)?"
     rf"(?P<n>{EN_NUMBER})\s+(?!(?:paragraphs?|sentences?|sections?|words?|parts?|chapters?|"
     r"lines?|times?)\b)[^.;:!?\n]{1,60}?\b(?:as|in|using|with|via|formatted\s+as|in\s+the\s+"
     rf"form\s+of)\s+(?:a\s+|an\s+)?(?:markdown\s+)?(?P<list>{_BULLETS_EN})\b", _list_items),
    (rf"\b(?P<list>bullet(?:ed)?(?:[\s-]*point)?|numbered|markdown)\s+list\s+(?:of|with|"
     rf"containing)\s+(?:(?P<q>{_QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})\s+\w+", _list_items),
    (rf"(?<![\w-])(?P<n>{EN_NUMBER})-(?P<unit>sentence|paragraph|bullet(?:[\s-]point)?)s?\b(?!-)",
     _hyphen_units),
    (rf"\b(?:limit|keep|restrict|cap)\s+(?:{_WHOLE_EN})\s+to\s+(?:just\s+|only\s+)?"
     rf"(?P<n>{EN_NUMBER})\s+(?P<unit>words?|{_UNIT_EN[1:-1]})\b", _limited),
    (r"(?<!\bnot\s)(?<!n't\s)(?<!\bnever\s)(?<!\bwithout\s)(?<!\bavoid\s)(?<!\bfrom\s)"
     r"\b(?:include|use|using|mention|repeat|incorporate|contain|containing|feature)\s+"
     rf"(?:the\s+)?(?:key\s*)?(?:words?|terms?|phrases?)\s*:?\s*(?P<words>{_QUOTE_LIST})"
     rf"(?:\s*,?\s+{_TIMES_EN})?", _keyword_times),
    (rf"\b(?:the\s+)?(?:key\s*)?(?:word|term|phrase)\s+(?P<words>{_QUOTE_LIST})\s+(?:(?:should|"
     r"must|needs?\s+to|has\s+to|to)\s+)?(?:appears?|occurs?|(?:be|is)\s+used|shows?\s+up)\s+"
     rf"{_TIMES_EN}", _keyword_times),
    (r"\b(?:the\s+)?letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+(?:(?:should|must|needs?\s+to|"
     r"has\s+to|to|will)\s+)?(?:appears?|occurs?|(?:be|is)\s+used|shows?\s+up)\s+"
     rf"{_TIMES_EN}", _letter_times),
    (r"\b(?:use|include|using|including)\s+the\s+letter\s+[\"'“‘]?(?P<letter>[a-z])[\"'”’]?\s+"
     rf"{_TIMES_EN}", _letter_times),
    (r"\b(?:contains?|containing|include|including|use|using|with|have|has|add)\s+"
     rf"(?:(?P<q>{_QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})\s+words?\s+(?:in|with|written\s+in)\s+"
     r"all[\s-]*(?:capital\s+letters|capitals|caps|upper\s*case(?:\s+letters)?)\b",
     _capital_words),
    (r"\bwords?\s+(?:in|with|written\s+in)\s+all[\s-]*(?:capital\s+letters|capitals|caps|"
     r"upper\s*case(?:\s+letters)?)\s+(?:(?:should|must)\s+appear\s+)?"
     rf"{_TIMES_EN}", _capital_words),
    (rf"(?:\b(?P<q>{_QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:all[\s-]*caps?|"
     r"all[\s-]*capitals?|upper\s*case|upper-case)\s+words\b", _capital_words),
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
    (r"\b(?:no|zero|without|avoid(?:ing)?|(?:do\s+not|don't|must\s+not|should\s+not|never|"
     r"cannot|can't)\s+(?:use|include|contain|put|add|have)|refrain\s+from\s+using)\s+"
     r"(?:(?:any|using|the\s+use\s+of|a\s+single|a)\s+)*commas?\b|\bcomma-free\b",
     _flag("no_commas")),
    (r"\b(?:without(?:\s+(?:using|mentioning|saying|including))?|avoid(?:ing)?(?:\s+(?:using|"
     r"mentioning))?|exclude|excluding|refrain\s+from\s+(?:using|mentioning)|(?:must|should|do|"
     r"does|can)\s*(?:not|n't)\s+(?:use|include|contain|mention|say)|never\s+(?:use|mention|say)"
     r"|not\s+(?:use|include|contain|mention))\s+(?:the\s+|any\s+(?:of\s+the\s+)?)?(?:key\s*)?"
     rf"(?:words?|terms?|phrases?)\s*:?\s*(?P<words>{_QUOTE_LIST})", _forbidden_quoted),
    (rf"\b(?:the\s+)?(?:key\s*)?(?:words?|terms?|phrases?)\s+(?P<words>{_QUOTE_LIST})\s+"
     r"(?:(?:should|must|may|can)\s*(?:not|n't)\s+(?:appear|be\s+used)|never\s+appears?)",
     _forbidden_quoted),
    (r"\b(?:end|ends|ending|finish|finishes|finishing|conclude|concludes|concluding|close|closes|"
     r"closing)\s+(?:(?:it|(?:your|the)\s+\w+)\s+)?with\s+(?:(?:the|this|that)\s+)?(?:exact\s+)?"
     rf"(?:(?:phrase|sentence|words?|line|question|statement)\s*)?:?\s*(?P<phrase>{_QUOTE_ITEM})",
     _closing("ends_with")),
    (r"\b(?:end|finish|conclude|close)\s+(?:(?:it|(?:your|the)\s+\w+)\s+)?with\s+(?:(?:the|this|"
     r"that)\s+)?(?:exact\s+(?:phrase|sentence|words?)\s*:?|(?:phrase|sentence|words?)\s*:)\s*"
     r"(?![\"“'‘「])(?P<phrase>[^\n\"“]{1,80}?(?:[!?](?=[\s.]|$)|\.(?=\s|$)))",
     _closing("ends_with")),
    (r"\b(?:start|starts|starting|begin|begins|beginning|open|opens|opening)\s+with\s+"
     r"(?:the|this)\s+(?:exact\s+)?(?:phrase|words?|sentence)\s*:?\s*"
     rf"(?P<phrase>{_QUOTE_ITEM})", _closing("starts_with")),
    (r"\b(?:response|answer|reply|output)\s+(?:should|must|has\s+to|needs\s+to)\s+be\s+"
     rf"(?:written\s+)?(?:entirely\s+|only\s+|wholly\s+)?in\s+({_LANGUAGES_EN})\b|"
     rf"\b(?:in|using)\s+({_LANGUAGES_EN})\s+only\b", lambda m: _language(_First(m))),
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
    (rf"(?:分为|分成|包括|包含|共|分|划分为)\s*{_ZN}\s*(个部分|部分|段落|个段落|个自然段|自然段|"
     r"个章节|个小标题|段|句话)", _zh_units),
    (rf"(?:分为|分成|包含|包括|按|按照|要求|涵盖)[^。；\n]{{1,60}}?(?<![每第]){_ZN}\s*(个部分|个板块|"
     r"大板块|个章节)", _zh_units),
    (r"((?:[‘'“\"][^’'”\"\n]{1,20}[’'”\"][、，,和及与]?\s*)+)等?(?:关键词|关键字)", _keywords),
    (rf"{_NOT_RANGE}(?<![第每])(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})\s*)?(?P<n>{ZH_NUMBER})\s*"
     rf"{_ZH_ITEM}(?!\s*(?:{_ZH_BULLETS}|{_ZH_NUMBERED}))[^。；！？\n]{{0,30}}?"
     rf"(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})", _list_items),
    (rf"(?:用|使用|以|采用)\s*(?:一个|一份)?\s*(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})"
     rf"[^。；！？\n]{{0,12}}?{_NOT_RANGE}(?<![第每])(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})\s*)?"
     rf"(?P<n>{ZH_NUMBER})\s*{_ZH_ITEM}",
     _list_items),
    (rf"(?:(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})|用|以|限|仅用|只用|控制在)\s*(?P<n>{ZH_NUMBER})\s*"
     r"句话(?P<within>以内|之内|以下)?", _zh_sentences),
    (r"(?:包含|包括|使用|出现|提到|提及|融入|带有|含有|加入)(?:以下)?(?:关键词|关键字|词语|词汇)"
     rf"[：:]?\s*(?P<words>{_QUOTE_LIST})(?:\s*(?:这个词|一词|等词)?\s*(?P<q>{_ZH_AT_LEAST}|"
     rf"{_ZH_AT_MOST})?\s*出现\s*(?P<q2>{_ZH_AT_LEAST}|{_ZH_AT_MOST})?\s*(?P<n>{ZH_NUMBER})\s*次)?",
     _keyword_zh),
    (rf"(?P<words>{_QUOTE_LIST})\s*(?:这个词|一词|这个关键词|等词)?\s*(?:在[^。；\n]{{0,8}}中)?\s*"
     rf"(?P<q>{_ZH_AT_LEAST}|{_ZH_AT_MOST})?\s*出现\s*(?P<q2>{_ZH_AT_LEAST}|{_ZH_AT_MOST})?\s*"
     rf"(?P<n>{ZH_NUMBER})\s*次", _keyword_zh),
    (rf"(?:分为|分成|共|{_ZH_DIVIDE})\s*{_ZN}\s*(?:-|–|~|～|到|至)\s*{_ZN}\s*个?(?:自然)?"
     r"(?:段落|段)",
     lambda m: _count("paragraph_count", "between", *_numbers(m)[:2], divider=None)),
    # Chinese form
    (rf"以\s*{_QUOTED}\s*(?:作为|作)?(?:结尾|结束|收尾)|结尾(?:处)?(?:要|需|需要|必须|请)?"
     rf"(?:写上|加上|是|为|以)\s*{_QUOTED}", lambda m: _phrase("ends_with")(_First(m))),
    (rf"以\s*{_QUOTED}\s*(?:作为|作)?(?:开头|开始|开篇)|开头(?:要|需|需要|必须|请)?"
     rf"(?:写上|是|为|以)\s*{_QUOTED}", lambda m: _phrase("starts_with")(_First(m))),
    (r"不(?:要|能|得)?(?:使用|用|出现|包含|含有)(?:任何)?逗号", _flag("no_commas")),
    (r"(?:避免|禁止|不允许|不许)(?:使用|出现)?(?:任何)?逗号|不(?:能|要|得|可)?(?:带|有|含)逗号",
     _flag("no_commas")),
    (r"(?:不要|不能|不得|禁止|避免|不可|切勿|请勿)(?:使用|出现|提到|提及|包含|用)(?:以下)?"
     rf"(?:词语|词汇|字眼|关键词|词)?[：:]?\s*(?P<words>{_QUOTE_LIST})", _forbidden_quoted),
    (r"(?:回答|回复|作答|输出|全文|答案|正文)(?:时|请|需|需要|要|必须|一律|应|应该|均|都)*"
     rf"(?:使用|用|以|采用)({_LANGUAGES_ZH})|(?:请|务必|必须)(?:使用|用)({_LANGUAGES_ZH})"
     r"(?=[。，,.！!；;\s]|$)", lambda m: _language(_First(m))),
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
