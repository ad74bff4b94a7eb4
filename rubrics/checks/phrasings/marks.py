"""The marks a request asks in its response's text: placeholders in square brackets ("at
least 4 bracketed placeholders", "至少包含2个占位符", "leave spots like [name] for me to fill
in", "put [brackets] for anything i need to fill in, at least three of em", "..., blanks in
[brackets] for the landlord to fill in", "Any detail the manager still has to supply goes in
square brackets", "put any detail I still need to fill in in [square brackets]"), and spans
highlighted in markdown ("highlight at least 3 parts with markdown", "italicize or bold at
least 4 important phrases", "mark 4 phrases as highlighted text", "bold the key terms",
"keep the markdown highlighting to two phrases at most", "Markdown emphasis on no more than
two phrases", "pick out the three key warnings and wrap each one in **double asterisks**",
"用markdown加粗至少3个关键词").

Highlights asked as content ("highlight the benefits of exercise", "highlight three benefits"
with no word of markdown) are no check."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.families import noun_rows
from rubrics.checks.phrasings.shared import (
    NOT_RANGE_EN,
    QUALIFIER_EN,
    TIMES_EN,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_LESS_THAN,
    ZH_MORE_THAN,
    ZH_START,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    relation_of,
    rules_of,
    times,
    times_relation,
    zh_relation_of,
)

_I = re.I | re.S

# --- highlights
_NOUNS = (r"(?:sections?|parts?|words?|phrases?|spans?|sentences?|passages?|portions?|segments?|"
          r"bits?|pieces?\s+of\s+text|text\s+(?:parts|sections))")
_SOFT_NOUNS = (r"(?:points?|ideas?|terms?|concepts?|facts?|details?|lines?|items?|things?|places?|"
               r"dates?|names?|numbers?|figures?|stats?|takeaways?)")
_MARKDOWN = re.compile(r"markdown|asterisk|\*|\bbold|\bitalic", re.I)
_QN = rf"{NOT_RANGE_EN}\b(?:(?P<q>{QUALIFIER_EN})\s*)?(?P<n>{EN_NUMBER})(?P<more>\s+or\s+more)?"
# a count or a range of spans: "2-3 bold phrases", "between two and four bolded terms"
_QN_RANGE = (rf"{NOT_RANGE_EN}\b(?:(?:between\s+)?(?P<low>{EN_NUMBER})\s*(?:-|–|to|or|and)\s*"
             rf"(?P<upper>{EN_NUMBER})|(?:(?P<q>{QUALIFIER_EN})\s*)?(?P<n>{EN_NUMBER})"
             r"(?P<more>\s+or\s+more)?)")
# what marks a span in markdown, named as a means: "*asterisks*", "**bold**", "粗体", "星号"
_MARKUP = (r"(?:markdown(?:\s+(?:bold|italics?))?|\*{0,2}asterisks\*{0,2}|"
           r"\*{1,2}[^*\n]{1,20}\*{1,2}|bold(?:face)?(?:\s+(?:text|font|type))?|italics?"
           r"|highlighting|星号|粗体|斜体|加粗|高亮)")
_ZH_Q = rf"(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN})?"
# what Chinese spans to highlight are called: "3个关键词", "两处重点"
_ZH_SPANS = r"(?:关键词|关键字|词语?|重点|要点|句子?|短语|概念|术语|数据|信息|内容)"
_ZH_MARK = r"(?:加粗|粗体|高亮|突出显示|标粗|斜体|标亮)"
_ZH_UNIT = r"(?:个|处|条|项|句话?)"


def _marked(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How many spans in markdown; "N" alone means at least N (a floor on emphasis), the
    relation the request states otherwise."""
    groups = m.groupdict()
    if groups.get("upper"):
        return count("highlight_count", "between", to_int(groups["low"]), to_int(groups["upper"]))
    qualifier = groups.get("q") or groups.get("qe") or ""
    if groups.get("more"):
        relation = "at least"
    elif re.search(r"[\u4e00-\u9fff]", qualifier):
        relation = zh_relation_of(qualifier)
    else:
        relation = relation_of(qualifier) if qualifier else "at least"
    if groups.get("soft") or groups.get("any"):
        sentence = re.split(r"(?<=[.!?\n])\s", m.string[m.start():])[0]
        before = m.string[max(0, m.start() - 60):m.start()]
        if not _MARKDOWN.search(before + sentence) \
                and not re.match(r"(?:bold|italic)", m.group(0), re.I):
            return []
    return count("highlight_count", relation, to_int(groups["n"]))


def _emphasized(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Emphasis is a highlight only when its sentence names markdown, asterisks, bold or
    italics ("emphasize 2 terms with **asterisks**"; not "emphasize three benefits")."""
    sentence = re.split(r"(?<=[.!?\n])\s", m.string[m.start():])[0]
    return _marked(m) if _MARKDOWN.search(sentence) else []


def _limited(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Highlights a limit caps: at most N, or the relation the limit's qualifier states."""
    qualifier = m.group("q")
    relation = relation_of(qualifier) if qualifier else "at most"
    return count("highlight_count", relation, to_int(m.group("n")))


def _some_marked(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    return count("highlight_count", "at least", 1)


_A_NUMBER = re.compile(rf"\b(?:{QUALIFIER_EN})\b|{EN_NUMBER}\b", re.I)


def _left_to_fill(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """What is left to fill in, said to go in brackets ("... goes in square brackets") or put
    there by a verb before it ("put any detail I still need to fill in in [brackets]"): one
    placeholder at least."""
    if not (m.group("verb") or m.group("goes")):
        return []
    return count("placeholder_count", "at least", 1)


def _uncounted(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Spans marked with no count in the words read ("emphasize the main idea with italics");
    with one inside them ("mark up at least 3 key phrases in bold") the count's rule reads
    it."""
    return [] if _A_NUMBER.search(m.group(0)) else _some_marked(m)


_HIGHLIGHT_VERBS = (r"(?:highlight(?:ing)?|bold(?:ing)?|boldface|embolden|italici[sz](?:e|ing)|"
                    r"(?:bold|italici[sz]e)\s+"
                    rf"(?:or|and|and/or)\s+(?:bold|italici[sz]e)|mark\s+up|use\s+{_MARKUP}\s+"
                    r"(?:formatting\s+)?to\s+(?:highlight|emphasi[sz]e|bold|mark|italici[sz]e|flag|"
                    r"call\s+out))")

# rules that open with an optional count run only near their markup's word
_MARKUP_GATE = (r"\b(?:bold(?:ed|face)?|italic(?:i[sz]ed)?|highlighted|emphasi[sz]ed)\b", (60, 80))
# the things counted, then each of them set in markdown: "the three most important warnings
# and wrap each one in **double asterisks**", "name four dates and bold them"
_EACH_OF_THEM = (r"(?:each(?:\s+one|\s+of\s+them)?|every\s+one(?:\s+of\s+them)?|them(?:\s+all)?|"
                 r"all\s+of\s+them)")
_MARKED_EACH = (rf"(?:(?:wrap|put|set|mark|format|enclose|render)\s+{_EACH_OF_THEM}\s+in\s+"
                r"(?:\*{0,2}(?:bold(?:face)?|italics?)\*{0,2}|\*{0,2}(?:double\s+|single\s+)?"
                rf"asterisks\*{{0,2}}|markdown(?:\s+(?:bold|italics?))?)|(?:bold|boldface|embolden|"
                rf"italici[sz]e)\s+{_EACH_OF_THEM})")
_MARKED_EACH_GATE = (_MARKED_EACH, (120, 0))

_PHRASINGS: tuple[Phrasing, ...] = (
    # placeholders in square brackets (on the count's line: "Length: more than 180
    # words\nPlaceholders: ..." counts words)
    Phrasing(
        rf"{_QN}[^\S\n]+(?:[\w-]+[^\S\n]+){{0,2}}?placeholders?\b", lambda m: count(
           "placeholder_count", "at least" if m.group("more") else relation_of(m.group("q") or ""),
           to_int(m.group("n"))),
        kind="placeholder_count", example="2 placeholders", counter="2 commas"),
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*(?:包含|使用|有|出现|设置)?\s*(?P<n>{ZH_NUMBER})\s*(?:个|处)"
        r"(?!以上|以内|以下|之内)[^。；\n]{0,12}?占位符", lambda m: count(
            "placeholder_count", zh_relation_of(m.group("q") or ""), to_int(m.group("n"))),
        kind="placeholder_count", example="请留出两个占位符。",
        counter="请用markdown突出两个重点。"),
    # "placeholders like [name] should appear at least twice"
    Phrasing(
        rf"\bplaceholders?\b[^.!?\n]{{0,40}}?\b(?:should|must|needs?\s+to|has\s+to|to)\s+(?:appear"
        rf"|be\s+"
        rf"used|show\s+up|occur)\s+{TIMES_EN}",
        lambda m: count("placeholder_count", times_relation(m), times(m)),
        kind="placeholder_count", example="Placeholders like [name] should appear at least twice.",
        counter="Include at least 2 placeholders like [name] and [address]."),
    # brackets used for what varies: "a template with [brackets] for the variable parts"
    Phrasing(
        r"\b(?:with|use|using|include|including|leave|add|put)\s+(?:some\s+)?(?:\[[^\]\n]{1,30}\]|"
        r"square[\s-]*brackets?)\s+(?:for|as|in\s+place\s+of|where)\b",
        lambda m: count("placeholder_count", "at least", 1),
        kind="placeholder_count",
        example="Make it a template with [brackets] for the variable parts.",
        counter='Begin the release with the exact phrase "FOR IMMEDIATE RELEASE" and make it four '
                "paragraphs long."),
    # placeholders with no count, shown by an example in brackets: "leave spots like [name]
    # for me to fill in", "use placeholders in square brackets", "leave [spots] in brackets",
    # a clause of its own ("..., blanks in [brackets] for the landlord to fill in")
    Phrasing(
        r"(?:\b(?:leave|use|include|add|put\s+in|insert|keep|with)\s+|(?:^|(?<=[,;:(]\s)|(?<=\n))"
        r"\s*)(?:some\s+|a\s+few\s+|"
        rf"a\s+couple\s+of\s+)?(?:(?!{EN_NUMBER}\b|{QUALIFIER_EN})[\w-]+\s+)?\[?(?:spots?|blanks?"
        rf"|gaps?|"
        r"slots?|fields?|placeholders?|spaces?)\]?\s+(?:(?:like|such\s+as|e\.g\.,?|for\s+\w+\s+"
        r"like)\s*\(?\[|(?:in|with)\s+\[?(?:square[\s-]+)?\[?brackets\b)",
        lambda m: count("placeholder_count", "at least", 1),
        kind="placeholder_count",
        example="Use placeholders in square brackets for the client's details.",
        counter="Use at least 2 placeholders in square brackets, such as [name]."),
    # what is left to fill in, said to go in brackets: "Any detail the hiring manager still
    # has to supply goes in square brackets", "put any detail I still need to fill in later in
    # [square brackets]" (not a form of the text: "stage directions go in square brackets")
    Phrasing(
        r"\b(?P<verb>(?:put|place|mark|show|write|leave|enclose|wrap|set)\s+)?(?:any|every|each|"
        r"all|whatever|anything|everything)\b[^.;!?\n]{0,60}?\b(?:fill(?:ed)?\s+in|supply|supplied|"
        r"provide[ds]?|add(?:ed)?\s+later|unknown|undecided|to\s+be\s+(?:confirmed|decided|"
        r"determined)|tbd|tbc|replace[ds]?|customi[sz]e[ds]?|personali[sz]e[ds]?)\b"
        r"[^.;!?\n]{0,40}?\b(?P<goes>(?:goes|go|belongs?|(?:should|must|will)\s+go|(?:is|are|"
        r"should\s+be|must\s+be)\s+(?:put|placed|shown|marked|written|enclosed|wrapped))\s+)?"
        r"(?:in|inside|within|between)\s+\[?(?:square[\s-]+)?brackets\b", _left_to_fill,
        kind="placeholder_count",
        example="Put anything I still have to fill in later in [square brackets].",
        counter="Every stage direction goes in square brackets."),
    Phrasing(
        r"(?:用|以)\s*(?:方括号|\[\s*\])\s*(?:留出|留下|留|标出|标注|表示)[^。；\n]{0,8}?(?:填写"
        r"|填入|填)",
        lambda m: count("placeholder_count", "at least", 1),
        kind="placeholder_count", example="请用方括号留出需要填写的地方。",
        counter="帮我写一个房屋租赁合同模板，需要填写的地方用方括号标出来，比如[房东姓名]、[月租金"
                "]，至少五处。"),
    # spans in markdown: "highlight at least 3 sections", "italicize or bold 4 phrases",
    # "highlight like 2 or 3 of the most important parts"
    Phrasing(
        rf"\b{_HIGHLIGHT_VERBS}\s+(?:(?:in|with|using)\s+markdown\s+|\([^()\n]{{1,30}}\)\s*)?"
        rf"(?:the\s+|like\s+|just\s+|maybe\s+)?"
        rf"{_QN_RANGE}\s+(?:of\s+(?:the|your)\s+)?"
        r"(?:[\w-]+\s+){0,3}?"
        rf"(?:{_NOUNS}|(?P<soft>{_SOFT_NOUNS})|(?P<any>[a-z][\w-]+))\b", _marked,
        kind="highlight_count", example="Bold 3 个关键词 please。",
        counter="用markdown加粗至少3个关键词。"),
    # a count of spans with their markup as an adjective: "2-3 bold phrases", "three
    # italicized sentences", "at least 4 bolded key terms"
    # ("3 bold ideas" are daring ones: "bold" needs a noun of text)
    Phrasing(
        rf"{_QN_RANGE}\s+(?:bolded|italic(?:i[sz]ed)?|highlighted|emphasi[sz]ed)\s+"
        rf"(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS}|(?:key\s+)?(?:terms?|words?|facts?|"
        r"names?|dates?|numbers?|figures?|takeaways?))\b", _marked, *_MARKUP_GATE,
        kind="highlight_count", example="2 highlighted spans", counter="2 commas"),
    Phrasing(
        rf"{_QN_RANGE}\s+bold(?:face)?\s+(?:key\s+)?(?:{_NOUNS}|terms?|keywords?)\b", _marked,
        *_MARKUP_GATE,
        kind="highlight_count", example="Use 3 bold phrases.",
        counter="Use bold text for at least 3 key phrases."),
    # "make the three most important facts stand out in bold"
    Phrasing(
        rf"\bmake\s+(?:the\s+)?{_QN}\s+(?:[\w-]+\s+){{0,4}}?(?:stand\s+out|pop)\s+(?:in|with"
        rf"|using)\s+"
        r"(?:markdown\s+)?(?:bold|italics?|markdown|asterisks)\b", _marked,
        kind="highlight_count", example="Make the two key warnings stand out in bold.",
        counter="Make the two most important ideas bold."),
    # no count: "make the important bits stand out w/ markdown bold"
    Phrasing(
        r"\bmake\s+(?:the\s+)?(?:key|important|main|most\s+important|crucial|essential|core)\s+"
        r"(?:[\w-]+\s+){0,2}?(?:stand\s+out|pop)\s+(?:in|with|using|w/)\s*(?:markdown\s+)?"
        r"(?:bold|italics?|markdown|asterisks)\b", _some_marked,
        kind="highlight_count", example="make the important bits stand out w/ markdown bold",
        counter="make the important bits stand out with examples"),
    # a limit on the highlights: "keep the markdown highlighting to two phrases at most"
    Phrasing(
        rf"\b(?:keep|limit|cap|restrict)\s+(?:the\s+|your\s+)?(?:markdown\s+)?(?:highlighting|"
        rf"highlights|bold(?:ing|\s+text)?|italics|emphasis)\s+(?:to|at)\s+(?:just\s+|only\s+)?"
        rf"(?:(?P<q>{QUALIFIER_EN})\s*)?(?P<n>{EN_NUMBER})(?:\s+(?:[\w-]+\s+)?(?:{_NOUNS}|"
        rf"{_SOFT_NOUNS}))?(?P<post>\s+at\s+most|\s+max"
        r"(?:imum)?)?\b", _limited,
        kind="highlight_count", example="Keep the markdown highlighting to two phrases at most.",
        counter="Keep the markdown headings to two at most."),
    Phrasing(
        rf"\b(?:use|using)\s+(?:markdown\s+)?(?:bold|italics?|bold(?:face)?\s+(?:text|font|type)|"
        rf"markdown\s+(?:bold|italics?|highlighting|emphasis)|emphasis)(?:\s*\([^()\n]{{1,20}}\))"
        rf"?\s+"
        rf"(?:for|on|to\s+(?:highlight|mark|"
        rf"emphasi[sz]e))\s+(?:the\s+)?{_QN}\s+(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})\b",
        _marked,
        kind="highlight_count", example="Use bold text for at least 3 key phrases.",
        counter="Bold text: at least 2 phrases."),
    # a labelled count: "Bold text: at least 2 phrases", "Highlights: 2 (markdown bold)"
    Phrasing(
        rf"(?:^|(?<=[.;,\n]))\s*(?:[-*•]\s*)?(?:bold(?:ed)?\s+(?:text|phrases|terms|words)|"
        rf"highlighted\s+(?:sections|phrases|spans|parts)|(?P<soft>highlights|emphasis|italics))\s*"
        rf"[:：]\s*{_QN_RANGE}\b", _marked,
        kind="highlight_count", example="Bold text: at least 2 phrases.",
        counter="Bold 2 phrases."),
    # "put at least three parts of your answer in bold", "marking 2 or more phrases in *italics*"
    Phrasing(
        rf"\b(?:put|set|make|write|format|mark|marking|putting|setting|wrap|wrapping)\s+(?:the\s+)?"
        rf"{_QN}\s+(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})(?:\s+of\s+(?:your|the)\s+"
        rf"(?:answer|"
        r"response|reply|text))?\s+(?:in\s+)?(?:\*{0,2}bold\*{0,2}|\*{0,2}italics?\*{0,2}|boldface|"
        r"(?:double\s+|single\s+)?asterisks|as\s+(?:highlighted|bold(?:ed)?|italici[sz]ed|"
        r"emphasi[sz]ed)(?:\s+text)?)\b",
        _marked,
        kind="highlight_count", example="Put 2 key sentences in italics.",
        counter="Write it in precisely 2 sentences."),
    # "at least 3 sections highlighted with markdown", "2 phrases in bold"
    Phrasing(
        rf"{_QN}\s+(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})\s+(?:(?:should|must|need\s+to)"
        rf"\s+"
        r"be\s+|are\s+|is\s+)?(?:highlighted|bolded|italici[sz]ed|emphasi[sz]ed\s+(?:with|in"
        r"|using)\s+"
        r"(?:markdown|asterisks|bold|italics?)|in\s+(?:bold|italics?))\b", _marked,
        kind="highlight_count", example="Highlight 2 phrases in bold.", counter="Bold 2 phrases."),
    # emphasis said in words, with markdown named: "emphasize at least 2 terms by wrapping them
    # in **double asterisks**"
    Phrasing(
        rf"\bemphasi[sz](?:e|ing)\s*(?:,\s*[^,.;\n]{{1,40}},\s*)?{_QN}\s+(?:[\w-]+\s+){{0,2}}?"
        rf"(?:{_NOUNS}|(?P<soft>{_SOFT_NOUNS}))\b",
        _emphasized,
        kind="highlight_count", example="emphasising 4 or more phrases with asterisks",
        counter="with 4 or more bullet points"),
    Phrasing(
        rf"{_QN}\s+(?:[\w-]+\s+){{0,3}}?[\w-]+\s+and\s+(?:then\s+)?{_MARKED_EACH}\b", _marked,
        *_MARKED_EACH_GATE,
        kind="highlight_count",
        example="Pick the two key warnings and wrap each one in **double asterisks**.",
        counter="Pick the two key warnings and wrap each one in a short sentence."),
    # markdown named as a noun, then how many spans it goes on: "Markdown emphasis on no more
    # than two phrases", "Bold on 3 key terms"
    Phrasing(
        r"(?:^|(?<=[.;:!?]\s)|(?<=\n))\s*(?:[-*•]\s*)?(?:markdown\s+(?:bold|italics?|highlighting|"
        r"emphasis)|bold(?:face)?(?:\s+(?:text|font|type))?|italics?)\s+(?:on|for)\s+"
        rf"{_QN}\s+(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})\b", _marked,
        kind="highlight_count", example="Markdown emphasis on no more than two phrases.",
        counter="Emphasis on no more than two phrases."),
    # "bold text should be used for at least 3 important dates"
    Phrasing(
        rf"\b(?:bold|italic|boldface)\s*(?:text|font|type|formatting)?\s+(?:should|must"
        rf"|needs?\s+to|"
        rf"has\s+to|will)\s+be\s+used\s+(?:for|on)\s+{_QN}\s+(?:[\w-]+\s+){{0,2}}?[\w-]+", _marked,
        kind="highlight_count", example="Bold text should be used for at least 3 important dates.",
        counter="Use bold text for at least 3 key phrases."),
    # "bold 至少两个 key terms"
    Phrasing(
        rf"\b{_HIGHLIGHT_VERBS}\s+{_ZH_Q}\s*(?P<n>{ZH_NUMBER})\s*个?\s*(?:(?:[\w-]+\s+){{0,2}}?"
        rf"(?:{_NOUNS}|{_SOFT_NOUNS})|{_ZH_SPANS})", _marked,
        kind="highlight_count", example="Bold 3 个关键词 please。",
        counter="用markdown加粗至少3个关键词。"),
    # "用markdown突出两个重点", "用星号标出至少三个关键词", "用 **bold** 标出 3 个 selling points"
    Phrasing(
        rf"(?:用|使用|以|采用)\s*(?:markdown\s*(?:的)?\s*)?{_MARKUP}\s*(?:格式)?\s*(?:来)?\s*"
        rf"(?:加粗|高亮|突出|"
        rf"强调|标出|标注|标记|标明)(?:显示)?\s*(?:{_ZH_Q}|(?P<qe>{QUALIFIER_EN}))\s*"
        rf"(?P<n>{ZH_NUMBER}|"
        rf"{EN_NUMBER})\s*{_ZH_UNIT}", _marked,
        kind="highlight_count", example="用斜体强调至少一句话。",
        counter="至少突出显示两个部分（用markdown的*斜体*）。"),
    # "至少 highlight 两处 with markdown"
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*{_HIGHLIGHT_VERBS}\s*(?P<n>{ZH_NUMBER})\s*(?P<soft>{_ZH_UNIT})"
        rf"(?:\s*(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})\b|\s*{_ZH_SPANS})?", _marked,
        kind="highlight_count", example="最多 bold 三处 key points。",
        counter="Bold the key terms."),
    # spans in markdown, no count: "highlight some key ideas using markdown", "bold key terms"
    Phrasing(
        rf"\b(?:highlight|emphasi[sz]e|stress|mark)\s+(?!(?:{QUALIFIER_EN})\s)(?!{EN_NUMBER}\b)"
        r"[^.;!?\n]{1,50}?\s+(?:with|using|in)\s+(?:markdown|\*{0,2}bold\*{0,2}|italics|asterisks|"
        r"\*{1,2}[^*\n]{1,20}\*{1,2})(?!\s+(?:headings?|headers?|lists?|tables?))", _uncounted,
        kind="highlight_count", example="Emphasize the main idea with italics.",
        counter="Emphasize the benefits with examples."),
    # "put a few key words in **bold**"
    Phrasing(
        rf"\b(?:put|set|make|write|format|mark)\s+(?:a\s+few|some|several|the\s+key|key|important|"
        rf"the\s+most\s+important|the\s+main)\s+(?:[\w-]+\s+){{0,2}}?(?:{_NOUNS}|{_SOFT_NOUNS})\s+"
        r"(?:in\s+)?(?:\*{0,2}bold\*{0,2}|italics?|boldface)\b", _some_marked,
        kind="highlight_count", example="Put a few key words in **bold**.",
        counter="Put 2 key sentences in italics."),
    Phrasing(
        rf"\b(?:use|using)\s+{_MARKUP}\s+to\s+(?:highlight|bold|emphasi[sz]e)\s+(?!"
        rf"(?:{QUALIFIER_EN})"
        rf"\s)(?!{EN_NUMBER}\b)", _some_marked,
        kind="highlight_count", example="Use *asterisks* to highlight key points.",
        counter="Use markdown to highlight at least two sections, e."),
    Phrasing(
        r"\b(?:bold|boldface)\s+(?:the\s+)?(?:key|important|main|core)\s+(?:points?|information|"
        r"content|terms?|words?|phrases?|facts?|details?|ideas?|concepts?)\b|\b(?:key|important|"
        r"main|core)\s+(?:points?|information|content|terms?|words?|phrases?|facts?|details?)\s+"
        r"(?:should\s+be\s+|must\s+be\s+)?in\s+bold\b", _some_marked,
        kind="highlight_count", example="Mark up at least 3 key phrases in bold.",
        counter="Use bold text for at least 3 key phrases."),
    # "bold the thesis statement", "italicize the book titles": one thing set in markdown
    Phrasing(
        r"(?:^|(?<=[.;:!?,]\s)|(?<=\n))\s*(?:and\s+)?(?:bold|boldface|embolden|italici[sz]e)\s+"
        r"(?:the|all|"
        r"any|each|every|your)\s+(?!(?:whole|entire)\b)[a-z]+", _some_marked,
        kind="highlight_count",
        example="use the vocabulary words 'compelling' and 'furthermore'; bold the thesis "
                "statement.",
        counter="Requirements: 4-6 paragraphs, at least 400 words, and use the vocabulary words "
                "'compelling', 'furthermore', and 'consequently'."),
    # "用星号标出关键词": a markup named (not markdown alone, which may be headings), no count
    Phrasing(
        rf"(?:用|使用|以|采用)\s*(?:markdown\s*(?:的)?\s*)?(?!markdown){_MARKUP}\s*(?:格式)?\s*"
        rf"(?:来)?\s*"
        rf"(?:标出|标注|标记|突出|强调)(?!\s*(?:{ZH_AT_LEAST}|{ZH_AT_MOST})?\s*(?:{ZH_NUMBER}"
        rf"|{EN_NUMBER}))",
        _some_marked,
        kind="highlight_count", example="用星号标出关键词。",
        counter="请用星号标出至少三个关键词，例如*气候*。"),
    # Chinese: "用markdown加粗至少3个关键词", "至少突出显示两个部分", "重点信息加粗"
    Phrasing(
        rf"{_ZH_MARK}(?:显示|标出|标注|强调)?\s*{_ZH_Q}\s*(?P<n>{ZH_NUMBER})\s*(?:个|处|条|句话?)",
        _marked,
        kind="highlight_count", example="用斜体强调至少一句话。",
        counter="用 markdown 斜体强调 at least 2 句话。"),
    Phrasing(
        rf"{_ZH_MARK}(?:显示|标出|标注|强调)?[^。；\n]{{0,6}}?[，,]\s*{_ZH_Q}\s*(?P<n>{ZH_NUMBER})"
        rf"\s*"
        r"(?:个|处|条)", _marked,
        kind="highlight_count", example="把关键词加粗，至少三个。",
        counter="用markdown加粗至少3个关键词。"),
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*{_ZH_MARK}(?:显示|标出|标注)?\s*(?P<n>{ZH_NUMBER})\s*(?:个|处|条)",
        _marked,
        kind="highlight_count", example="请用粗体标注两处重要信息。",
        counter="文中重要的概念请用粗体标出，至少4处。"),
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*(?P<n>{ZH_NUMBER})\s*(?:个|处|条|句话?)[^。；，,\n]{{0,10}}?(?:用"
        rf"|使用|以)?"
        rf"(?:markdown)?{_ZH_MARK}", _marked,
        kind="highlight_count", example="请将最重要的三句话加粗。", counter="给重要的内容加粗。"),
    Phrasing(
        r"(?:重点|关键|重要|核心)(?:的)?(?:信息|内容|词语?|句子?|数据|部分)?(?:需要|需|要|请|应"
        r"|必须)?"
        r"(?:用|使用|以)?(?:加粗|粗体)", _some_marked,
        kind="highlight_count", example="关键数据请加粗。",
        counter="用markdown加粗至少3个关键词。"),
)

# the placeholder noun family's rows (`families`), one (example, counter-example) per
# structure
_PLACEHOLDERS = noun_rows("placeholder_count", (
    # before the noun; labelled; after the noun; after the noun with a unit; in parentheses;
    # a limit; referred back to
    ("请留出两个占位符。", "请用markdown突出两个重点。"),
    ("Placeholders: at least 3, in [square brackets].",
     "Include at least 3 placeholders in square brackets, like [name]."),
    ("用方括号标出需要填写的内容，至少5处。", "请用方括号留出需要填写的地方。"),
    ("写一个通用的活动邀请函模板，用方括号标出需要替换的内容（如[活动名称]），占位符不要超过5处。",
     "写一份租房合同模板，用方括号标出需要填写的内容，至少5处，比如[租金]。"),
    ("include placeholders in square brackets for the address and phone (exactly two)",
     "The template shall contain between two and four placeholders in square brackets."),
    ("Limit the placeholders to 3.", "Limit the placeholders to names."),
    ("use square-bracket fields such as [client] and [amount], at least five of them.",
     "use square-bracket fields for anything personal in the wedding speech, at least 3 of them"),
))

TABLES = (Table(_I, _PHRASINGS), _PLACEHOLDERS)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
