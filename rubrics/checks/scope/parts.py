"""Whose a reading is; the pre-pass asks it of every match. A length or count is the
response's, or one named part's, an item's, each of several texts' or one of several versions'
(a labelled line, a list item, a contents list, "for the main section", "每个版本", a part as
the subject of its clause or the object of a verb of limiting: "the subject line should be no
longer than 6 words", "no paragraph may exceed 120 words", "keep the subject line under 8
words"; a part the response ends with: "end with a one-sentence summary"; `per_item`,
`of_a_part`, `said_of_a_part`). A form, a word or a count said of a text other than the
response is `other_texts`'s. Whether the words ask anything at all (a question about the
topic, a permission) is the pre-pass's own test."""

from __future__ import annotations

import re

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.languages.names import LANGUAGE_NAMES

# ("800 words each"; not "3 paragraphs, each separated by ***", whose "each" opens a clause about
# the parts, nor "Part 1, Part 2 and Part 3 (one per month)", a note on them, nor "every letter
# small: a hundred words", the text's letters or words, which are no items of it)
EACH_AFTER = re.compile(r"^[^.;,(\n]{0,12}\b(?:each|per|apiece)\b", re.I)
EACH_BEFORE = re.compile(r"\b(?:each|every|per)\b(?!\s+(?:single\s+)?(?:letter|character|word)s?\b)"
                         r"[^.;\n]{0,40}$", re.I)
# "each of your 3 paragraphs": the count right after it is how many there are
_EACH_OF = re.compile(r"\beach\s+of\s+(?:the|your|these|those|its)\s+$", re.I)
EACH_ZH_AFTER = re.compile(r"^\s*/\s*(?:each|per)|^每|^/(?:篇|段|条|章)")
EACH_ZH_BEFORE = re.compile(r"每(?:段|篇|条|个|部分|章|节|点|项|句|行|首)[^，。；]{0,10}$")

# Whose a length or count is: the whole response's, or one named part's.
# a list item's opening: "- ", "* ", "3. ", "2) ", "1、", "(1)"
LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}\s*[.)）、](?!\d)|[(（]\d{1,2}[)）])\s*")
# labelled requirements in a row on one line ("Language: French. Length: about 100 words.",
# "语言：法语；长度：不超过100个单词"): a length's label is the one of its own segment
SEGMENT_BREAK = re.compile(r"[；;。]|\.\s")
# "标题：", "- Opening:", "- [[ ## headline ## ]]:": a line's label, up to its first colon
LINE_LABEL = re.compile(r"^(\[\[[^\]\n]{1,40}\]\]|[^：:\n]{1,16}?)\s*[：:]")
# "引言（", ", a body (": the text a part's name may sit in ends at one of these
NAME_SEPARATOR = re.compile(r"[、：:；;，,]")
# labels and names under which a length is still the response's: its length, the
# requirements, the body or the main content (the response bar its title), a total
WHOLE_LABEL = re.compile(
    r"字数|篇幅|长度|要求|规范|格式|注意|备注|提示|任务|全文|全篇|整体|总(?:字数|长度|篇幅|体)|"
    r"内容|正文|主体|\blength\b|\bword\s*count\b|\bwords\b|\bsize\b|\brequirements?\b|\bformat\b|\bnote\b|"
    r"\binstructions?\b|\btask\b|\btotal\b|\boverall\b|\bcontent\b|\bbody\b|结构|形式|"
    r"\brules?\b|\bconstraints?\b|\bspecs?\b|"
    r"\bstructure\b|\blayout\b|\bshape\b|\bform\b|\borgani[sz]ation\b", re.I)
# a line's label that is no part: the task ("Writing practice:", "Assignment for Thursday:",
# "Homework:") or the response's language ("In Turkish:", "Mandarin please:")
TASK_LABEL = re.compile(r"\b(?:assignment|homework|exercise|practice|brief)\b", re.I)
LANGUAGE_LABEL = re.compile(rf"(?:in\s+)?(?:{LANGUAGE_NAMES})(?:\s+(?:only|please|pls|plz))?",
                            re.I)
# "全文", "in total": a length said to be the total is the response's however it is placed
TOTAL = re.compile(r"总(?:字数|长度|篇幅|计|共)|全文|全篇|整篇|合计|共计|一共|"
                   r"\b(?:total|overall|altogether|combined|in\s+all(?!\s+(?:caps|capitals?|"
                   r"lower|upper)))\b", re.I)
# a total right after a count: "no more than 10 bullets overall"
_TOTAL_AFTER = re.compile(r"\s*(?:overall|in\s+total|total|altogether|in\s+all)\b", re.I)
WRITE_VERB = re.compile(r"写|创作|生成|设计|起草|制作|\b(?:write|create|draft|compose|generate|"
                        r"produce|design|prepare|craft)\b", re.I)
# what the request's first writing verb asks for: "撰写20条评价", "设计一组帖文",
# "Write 3 reviews", "write a 500-word essay" (one text; "write a couple of hundred words" too)
ITEMS_ZH = re.compile(
    rf"(?:撰写|编写|拟写|写|创作|生成|设计|起草|制作)出?\s*(?:(?P<n>{ZH_NUMBER})"
    rf"(?:\s*(?:-|–|~|～|到|至)\s*{ZH_NUMBER})?\s*(?:条|篇|首|则|封|份)|"
    r"(?P<many>一组|一系列|若干|几(?:条|篇|首|则|封|份)))")
ITEMS_EN = re.compile(
    r"\b(?:write|create|draft|compose|generate|produce|design|prepare|craft)\s+"
    r"(?:me\s+|us\s+)?(?:(?P<many>a\s+(?:set|series|list|few|couple)\s+of|several|multiple)\b"
    r"(?!\s+(?:hundred|thousand)\b)|"
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
# (not the period of a dotted abbreviation: "e.e. cummings", "e.g. *antigen*", "U.S. law")
SENTENCE_END = re.compile(r"[。！？!?；;\n]|\.(?<!\.[A-Za-z]\.)(?=\s)")
CLAUSE_BREAK = re.compile(r"[，,。！？!?；;\n]")
# the words naming one part of a response in English
_PART_NOUN = r"(?:section|part|chapter|segment|portion)"
# a length followed by the part it is for, read from the length's end: "approximately 4,000
# words for the main analysis section" (singular: "1500 words in the following sections" is a
# total)
FOR_A_PART = re.compile(
    rf"\s*(?:for|in)\s+(?:the|its|your|this|that)\s+(?P<name>(?:[\w'-]+\s+){{0,4}}?)"
    rf"{_PART_NOUN}\b(?!-)", re.I)
# a length stated after the part it is for, read up to the length's first word or its
# qualifier ("about", "no more than"): "the introduction section should be about 200 words",
# "the conclusion part of at most 100 words"
PART_BEFORE = re.compile(
    rf"\bthe\s+(?P<name>(?:[\w'-]+\s+){{0,4}}?){_PART_NOUN}\s+(?:(?:should|must|needs?\s+to|"
    r"will|is\s+to)\s+(?:be|have|contain|run(?:\s+to)?|take\s+up)|of|with|at)\s*:?\s*"
    r"(?:[a-z]+\s+){0,3}$", re.I)
# one of several versions of the text: "长版广告语", "短版本", "a short version", "the English
# version"
_VERSION_EN = (r"(?:long(?:er)?|short(?:er)?|full|brief|extended|condensed|abridged|english|"
               r"chinese|formal|casual)[\s-]+(?:version|variant|edition)s?")
VERSION_NAME = re.compile(
    r"(?:长|短|简|简短|精简|完整|详细|加长|中文|英文|双语|正式|口语)版(?:本)?(?![权面块式型])|"
    rf"\b{_VERSION_EN}\b", re.I)
# a length followed by the version it is for: "under 15 words for the short version"
FOR_A_VERSION = re.compile(rf"\s*(?:for|in)\s+(?:the|its|your|each)\s+{_VERSION_EN}\b", re.I)
# words asking for several versions at once: "每个版本", "两个版本", "both versions"
SEVERAL_VERSIONS = re.compile(
    r"(?:每个|每一|各个|各|两个|两|二|三个|三|多个|几个|\d\s*个)版本|"
    r"\b(?:each|every|both|two|three|several|multiple|\d)\s+(?:\w+\s+)?(?:versions|variants)\b",
    re.I)


LENGTH_KINDS = frozenset({"word_count", "char_count"})
# kinds whose "each" is each word, not each part: "the words 'north' and 'south' at least once
# each"
WORD_KINDS = frozenset({"keyword", "forbidden_word", "letter_frequency"})
# kinds an "each" near them never makes one part's: each word, or a marker every field keeps
# ("begin each field with its marker, [[ ## title ## ]] ...")
EACH_FREE_KINDS = WORD_KINDS | {"field_marker", "xml_tag"}
# the kinds a length or a count of parts stated for one named part would wrongly give
PART_KINDS = LENGTH_KINDS | {"paragraph_count", "section_count", "sentence_count",
                             "bullet_count", "heading_count"}
# how far inside a parenthesis a length may start and still be the named part's
PAREN_REACH = 30
NAME_CHARS = 30
# what comes before a part's name in an enumeration of parts ("结构：引言（…）、主要事迹（…）")
ENUMERATION_SEPARATORS = "、：:；;"


# the whole reply named in the words read: "format your entire response as JSON"
_WHOLE_REPLY = re.compile(r"\b(?:entire|whole|full|complete)\s+(?:response|reply|answer|output)\b",
                          re.I)
# "each" right before the noun a count at the end of the words refers back to: every one of
# the things counted ("Show each blank as a word in square brackets, ..., and include ten of
# them")
_EVERY_ONE = re.compile(r"\b(?:each|every)\s+$", re.I)
_REFERS_BACK = re.compile(r"\bof\s+(?:them|['’]?em|those)\s*$", re.I)


def per_item(text: str, match: re.Match[str]) -> bool:
    """A length said of each item ("800 words each", "每个帖文800-1200字"); not a count said
    to be the total ("each tip its own bullet; eight tips in total"), nor words that name the
    whole reply ("a short answer to each, and format your entire response as JSON"), nor a
    count of the very things "each" was said of ("each blank ..., and include ten of them")."""
    if TOTAL.search(match.group(0)) or _WHOLE_REPLY.search(match.group(0)) \
            or _EVERY_ONE.search(text, 0, match.start()) and _REFERS_BACK.search(match.group(0)) \
            or _TOTAL_AFTER.match(text, match.end()) \
            or _restates_each(text, match) or _EACH_OF.search(text, 0, match.start()):
        return False
    after = text[match.end():match.end() + 30]
    before = text[max(0, match.start() - 40):match.start()]
    return bool(EACH_AFTER.search(after) or EACH_BEFORE.search(before)
                or EACH_ZH_AFTER.match(after) or EACH_ZH_BEFORE.search(before))


def _restates_each(text: str, match: re.Match[str]) -> bool:
    """A count in parentheses right after the thing "each" was said of, counting that same
    thing ("use ## for each question heading (4 headings)"): the total of them."""
    before = re.search(r"\b(\w{4,})\s*[(（]\s*$", text[max(0, match.start() - 40):match.start()])
    said = re.search(r"(\w{4,})\W*$", match.group(0))
    return bool(before and said and before.group(1)[:5].lower() == said.group(1)[:5].lower())


def _line_before(text: str, at: int) -> str:
    """The text from the start of the line up to `at`."""
    return text[text.rfind("\n", 0, at) + 1:at]


def _unmarked(line: str) -> str:
    """The line without its list marker ("- ", "3. ", "(1)")."""
    marker = LIST_MARKER.match(line)
    return line[marker.end():] if marker else line


def _names_the_whole(name: str) -> bool:
    """A label or name under which a length stays the response's: its length, the
    requirements, the body, a total, or words that ask for the text itself."""
    return bool(WHOLE_LABEL.search(name) or WRITE_VERB.search(name))


def _labels_no_part(label: str) -> bool:
    """A line's label under which a length stays the response's: one a name would keep
    (`_names_the_whole`), the task, or the response's language."""
    return _names_the_whole(label) or bool(TASK_LABEL.search(label)
                                           or LANGUAGE_LABEL.fullmatch(label.strip()))


def _after_label(line: str) -> bool:
    """A length on a labelled line ("- 标题：简洁有力，20字以内", "Title: under 10 words") is
    the labelled part's."""
    body = _unmarked(SEGMENT_BREAK.split(line)[-1])
    label = LINE_LABEL.match(body)
    if not label:
        return False
    said = body[label.end():]
    return not (_labels_no_part(label.group(1)) or WRITE_VERB.search(said)
                or TOTAL.search(said))


def _in_named_paren(line: str) -> bool:
    """A length in parentheses right after a part's name on a list line or in an enumeration
    ("- Main slogan (10-15 words)", "结构：引言（300字）、主要事迹（2000字左右）") is that
    part's; after the text asked for ("写一篇散文（2000字左右）") it is the response's."""
    opened = max(line.rfind("("), line.rfind("（"))
    closed = max(line.rfind(")"), line.rfind("）"))
    if opened < 0 or closed > opened or len(line) - opened > PAREN_REACH:
        return False
    before = line[:opened]
    body = _unmarked(before)
    on_list_line = len(body) < len(before)
    separators = list(NAME_SEPARATOR.finditer(body))
    name = (body[separators[-1].end():] if separators else body).strip()
    if not name or len(name) > NAME_CHARS or _names_the_whole(name):
        return False
    if separators:
        return separators[-1].group(0) in ENUMERATION_SEPARATORS
    return on_list_line


def _in_contents_item(text: str, end: int) -> bool:
    """A length or count in the first clause of a numbered item of a list of contents
    ("需要包含以下内容：1) 活动规划需包含……四大板块") is that item's; one in a later clause
    ("3) 提到……经验，1200字左右") is said of the response."""
    line_start = text.rfind("\n", 0, end) + 1
    items = list(NUMBERED_ITEM.finditer(text[line_start:end]))
    if not items:
        return False
    item = line_start + items[-1].end()
    said = text[item:end]
    return bool(CONTENTS_INTRO.search(text, max(0, item - CONTENTS_REACH), item)) \
        and not (CLAUSE_BREAK.search(said) or WHOLE_LABEL.search(said) or TOTAL.search(said))


def _for_a_named_part(text: str, match: re.Match[str]) -> bool:
    """A length said to be for one named part: "approximately 4,000 words for the main analysis
    section", "the introduction section should be about 200 words"; not when the part named is
    the body or the whole ("800 words for the main body section")."""
    after = FOR_A_PART.match(text, match.end())
    before = PART_BEFORE.search(clause_before(text, match.start()))
    return any(found and not _names_the_whole(found.group("name")) for found in (after, before))


def _for_a_version(text: str, match: re.Match[str]) -> bool:
    """A length said of one of several versions the request asks for ("长版广告语字数控制在
    50字以内，短版广告语字数控制在15字以内", "a long version under 50 words and a short version
    under 15 words"): each version's, not the response's. A length said of the one version
    asked for ("write a short version of 100 words") is the response's."""
    names = {" ".join(found.group(0).lower().split()) for found in VERSION_NAME.finditer(text)}
    if len(names) < 2 and not SEVERAL_VERSIONS.search(text):
        return False
    return bool(VERSION_NAME.search(since_clause_break(text, match.start()))
                or FOR_A_VERSION.match(text, match.end()))


def since_clause_break(text: str, at: int) -> str:
    """The text from the last comma, semicolon or sentence end before `at` up to `at`."""
    breaks = [m.end() for m in CLAUSE_BREAK.finditer(text, 0, at)]
    return text[breaks[-1] if breaks else 0:at]


def clause_before(text: str, at: int) -> str:
    """The text from the start of the sentence up to `at`."""
    ends = [m.end() for m in SENTENCE_END.finditer(text, 0, at)]
    return text[ends[-1] if ends else 0:at]


def asks_for_several(text: str) -> bool:
    """Whether the request's first writing verb with a count asks for several texts ("撰写20条
    用户评价", "设计一组帖文", "Write 3 reviews") rather than one ("写一篇", "write a 500-word
    essay", "write 3 paragraphs")."""
    found = [m for m in (ITEMS_ZH.search(text), ITEMS_EN.search(text)) if m]
    if not found:
        return False
    first = min(found, key=lambda m: m.start())
    if first.group("many"):
        return True
    n = to_int(first.group("n")) if first.group("n") else None
    what = first.groupdict().get("what") or ""
    return (n or 0) >= 2 and not PART_UNITS.search(what)


# the subject of the clause a requirement sits in, and the modal after it: "The subject line
# should be ...", "..., and the lead paragraph shouldn't exceed ...", "Each item should ...",
# "a story whose first sentence is ..."
_SUBJECT = re.compile(
    r"(?:(?:^|[,;:(])\s*(?:(?:and|but|while|whereas)\s+)?|"
    r"\b(?:and|but|while|whereas|whose|which|where)\s+)"
    r"(?P<np>(?:[\w'’-]+\s+){0,3}?[\w'’-]+)\s+(?:should|must|may|might|can|could|will|shall|is|"
    r"are|has\s+to|have\s+to|needs?\s+to|ought\s+to|has|have|contains?)(?:\s*not|n['’]t)?\b",
    re.I)
# a subject naming a part of the text, never the whole: a part that is one by its name (the
# subject line, the headline), one of the units qualified as one or each of them (the lead
# paragraph, the intro paragraph, the first one, no paragraph, each item, none of the
# bullets), or all of the units (paragraphs, the bullets)
_PART_UNITS = (r"(?:paragraph|sentence|item|bullet(?:\s+point)?|point|tip|line|step|entry|"
               r"section|part|chapter|stanza|verse|question|answer|idea|slide|heading|option|"
               r"example|reason|fact|title)")
_NAMED_PART = (r"(?:subject\s+line|title|headline|heading|header|subheading|caption|tagline|"
               r"slogan|greeting|salutation|sign[\s-]?off|intro(?:duction)?|conclusion|lead|lede|"
               r"hook|chorus|refrain|bridge|punchline|moral)")
PART_NP = re.compile(
    rf"(?:(?:the|its|your|each|every|any|no)\s+)?(?:[\w-]+\s+)?{_NAMED_PART}s?|"
    rf"(?:each|every|any|no|one|a\s+single)\s+(?:[\w-]+\s+)?{_PART_UNITS}|"
    rf"(?:none|each|every\s+one|any|one)\s+of\s+(?:the|your|its|these)\s+(?:[\w-]+\s+)?"
    rf"{_PART_UNITS}s|"
    r"(?:(?:the|its|their|your)\s+)?(?:first|second|third|fourth|fifth|last|final|opening|"
    rf"closing|lead|lede|intro|introductory|concluding|middle|top)\s+(?:[\w-]+\s+)?"
    rf"(?:{_PART_UNITS}|one)|(?:the\s+|all\s+(?:the\s+)?|your\s+)?(?:[\w-]+\s+)?{_PART_UNITS}s",
    re.I)
# a clause of its own after the subject's, its verb an imperative: "The subject line must
# include 'URGENT', and keep the whole email under 120 words"
_NEW_CLAUSE = re.compile(r"[,;]\s*(?:(?:and|but|then)\s+)?(?:please\s+)?(?:keep|make|write|use|"
                         r"limit|hold|cap|add|include|end|finish|start|begin|put|give|stay)\b",
                         re.I)
# a part as the object of a verb of limiting, right before the bound: "keep the subject line
# under 8 words", "make the intro two sentences long"; and "it" after such an object: "make
# the title a pun and keep it under six words"
_KEPT = re.compile(r"\b(?:keep|limit|cap|hold|restrict|make)\s+"
                   r"(?P<np>(?:[\w'’-]+\s+){0,3}?[\w'’-]+)\s+(?:(?:to|at)\s+)?$", re.I)
_IT_AFTER_PART = re.compile(
    rf"\b(?:make|write|give|keep|craft|have|put|set)\s+(?:the|your)\s+(?:[\w-]+\s+)?"
    rf"{_NAMED_PART}\b[^.;!?\n]{{0,60}}?\band\s+(?:\w+\s+)?it\s+(?:(?:to|at)\s+)?$", re.I)


# the one text the request asks for, right after its verb: "Write a caption for ...", "Write,
# in Traditional Chinese, a caption for ..." (not one of two: "a headline and an intro")
_ASKED_TEXT = (r"\b(?:write|create|draft|compose|generate|produce|prepare|craft|give\s+me)\s*"
               r"(?:(?:me|us)\s+)?(?:,[^,.;!?\n]{{1,40}},\s*)?(?:a|an|one)\s+"
               r"(?:(?!(?:with|and|or|plus|of|for|to|in|on|about|a|an|the|that|which)\b)[\w-]+\s+)"
               r"{{0,3}}?{noun}\b(?!\s+(?:and|with|plus|or)\b)")


def _a_part(text: str, np: str) -> bool:
    """Whether a noun phrase names a part of the text, not the one text the request asks for
    ("Write a caption for my photo. Keep the caption within 70 characters": the response)."""
    if not PART_NP.fullmatch(np):
        return False
    noun = re.escape(np.split()[-1])
    return not re.search(_ASKED_TEXT.format(noun=noun), text, re.I)


def said_of_a_part(text: str, match: re.Match[str]) -> bool:
    """Whether the match is said of a part of the text: the subject of its clause ("The
    subject line should be ... no longer than 6 words", "no paragraph may exceed 120 words",
    "Every bullet must contain the word 'community'"), or the object of a verb of limiting
    ("keep the subject line under 8 words", "make the title a pun and keep it under six
    words"); not the one text the request asks for ("Write a caption ... Keep the caption
    within 70 characters", `_a_part`), nor a total said after the subject ("Each section should
    be around 2000 words, with the total text exceeding 6000 words", "4 sections in total"),
    nor a clause of its own after it (", and keep the whole email under 120 words")."""
    # (the match may open with the modal: "... the lead paragraph shouldn't exceed 35 words")
    clause = clause_before(text, match.start())
    kept = _KEPT.search(clause)
    if kept and _a_part(text, kept.group("np").strip()) or _IT_AFTER_PART.search(clause):
        return True
    subjects = [s for s in _SUBJECT.finditer(clause + match.group(0)) if s.start() < len(clause)]
    if not subjects or not _a_part(text, subjects[-1].group("np").strip()) \
            or _NEW_CLAUSE.search(clause + match.group(0), subjects[-1].end()):
        return False
    return not (TOTAL.search(clause, subjects[-1].end()) or TOTAL.search(match.group(0))
                or TOTAL.search(text, match.end(), match.end() + 12))


# a part the response opens or closes with, its length before its name: "end with a
# one-sentence summary", "open with a two-sentence hook"
_AT_AN_EDGE = re.compile(r"\b(?:end|ending|finish|finishing|close|closing|conclude|concluding|"
                         r"wrap\s+up|round\s+off|start|starting|begin|beginning|open|opening|"
                         r"kick\s+off|lead\s+off)\s+(?:it\s+|things\s+)?(?:off\s+|up\s+)?with\s+"
                         r"(?:a|an|one)\s+$", re.I)


def of_a_part(text: str, match: re.Match[str], kind: str, several: bool) -> bool:
    """Whether a length or count of parts the match states belongs to one named part, or to
    each of the several texts asked for, rather than to the whole response."""
    if kind not in PART_KINDS:
        return False
    line = _line_before(text, match.start())
    if _after_label(line) or _in_named_paren(line) or _in_contents_item(text, match.end()) \
            or _AT_AN_EDGE.search(text, max(0, match.start() - 40), match.start()):
        return True
    if _for_a_named_part(text, match) or _for_a_version(text, match) \
            or said_of_a_part(text, match):
        return True
    return several and kind in LENGTH_KINDS \
        and not TOTAL.search(clause_before(text, match.start()))
