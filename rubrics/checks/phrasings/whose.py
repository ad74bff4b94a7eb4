"""Whose a length or count is: the regexes that tell a requirement of the whole response
from one stated for a named part, an item, each of several texts or one of several versions
(a labelled line, a list item, a contents list, "for the main section", "每个版本"...)."""

from __future__ import annotations

import re

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER

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
