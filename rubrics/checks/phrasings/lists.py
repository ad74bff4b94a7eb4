"""Counts of the response's markdown line markers: list items, bulleted or numbered, with the
list's style named ("an ordered list of five steps", "5 bullet points", "list 3 tips as bullet
points", "a bulleted list of 4 items", "4 points, numbered", "用项目符号列出三点", "用编号列表列出
5条"), and headings ("包含至少3个二级标题", "4 sections, each with a ## heading", "one heading per
subsection, 2 subsections"); with them the rows of the bullet and heading noun families and of
both list styles (`families`: "at least 5 dot points", "numbered, 7 steps", "number your tips 1
to 4", "Headings: 2-4").

A count of things with no style named ("give me 10 name ideas") or per part ("for each
product, list 3 features as bullets") is no check; a Chinese 一 is the article "a"."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.families import noun_rows, style_rows
from rubrics.checks.phrasings.shared import (
    NOT_RANGE_EN,
    PART_ADJECTIVE_EN,
    QUALIFIER_EN,
    UNITS_GATE,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_LESS_THAN,
    ZH_MORE_THAN,
    ZH_NOT_RANGE,
    ZH_SECTIONS,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    relation_of,
    rules_of,
    zh_relation_of,
)

_FLAGS = re.I | re.S
# the same, stated earlier in the sentence: "for each product, list 3 features as bullets",
# "每张海报用列表列出三个卖点"
_EACH_EARLIER = re.compile(r"(?:\b(?:each|every|per)\b|每)[^.;!?。；！？\n]{0,60}$", re.I)
_LIST_VERBS_EN = (r"list|give|name|provide|share|write|suggest|offer|outline|present|summari[sz]e|"
                  r"describe|explain|recommend|identify|create|generate|include|make|brainstorm")
_BULLETS_EN = (r"bullet(?:ed)?[\s-]*(?:points?|list|items?)|bullets|numbered\s+(?:list|items?|"
               r"points?)|markdown\s+list")
_ZH_ITEM = r"(?:个|条|点|项|种|样|步)"
_ZH_BULLETS = (r"(?:markdown|md)?\s*(?:无序)?(?<!有序)(?<!编号)(?<!编号的)列表|项目符号|圆点符号|"
               r"[“\"'‘][-•*][”\"'’](?:开头|标记|标出)")
_ZH_NUMBERED = (r"(?:(?:阿拉伯)?数字|序号)\s*(?:编号|标号|标注|列出|排列)|编号列出|有序列表|"
                r"编号列表|编号的列表|带编号|加编号|标上序号|标明序号")


def _list_kind(words: str) -> str:
    """numbered_count for numbered items, bullet_count for bullets or an unnumbered list."""
    numbered = re.search(r"number|(?<!un)ordered|编号|序号|有序", words, re.I)
    return "numbered_count" if numbered else "bullet_count"


def _list_items(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count of items the request says are bullets, numbered or a list; not when they are
    those of each of several parts. A Chinese 一 is the article "a" ("一个列表"), not a
    count."""
    if m.group("n").strip() == "一" or _EACH_EARLIER.search(m.string, 0, m.start()):
        return []
    if m.groupdict().get("n2"):
        return count(_list_kind(m.group("list")), "between", to_int(m.group("n")),
                     to_int(m.group("n2")))
    return count(_list_kind(m.group("list")), zh_relation_of(m.group("q") or ""),
                 to_int(m.group("n")))


def _numbered_points(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Points said to be numbered after their count: "4 points, numbered from 1", "3 or more
    points, each one numbered"."""
    relation = "at least" if m.group("more") else relation_of(m.group("q") or "")
    return count("numbered_count", relation, to_int(m.group("n")))


_PHRASINGS: tuple[Phrasing, ...] = (
    # ("a 4-item bulleted list", "a five-step numbered list")
    Phrasing(
        rf"(?<![\w-])(?P<n>{EN_NUMBER})[\s-](?:items?|points?|entry|entries|steps?|lines?|tips?)\s+"
        r"(?P<list>bullet(?:ed)?(?:[\s-]*point)?|numbered|(?:un)?ordered|markdown|dash(?:ed)?)"
        r"\s+list(?P<q>)",
        _list_items,
        kind="numbered_count", example="Write a 5-step ordered list.",
        counter="Write a 3-item unordered list."),
    Phrasing(
        rf"{NOT_RANGE_EN}(?:\b(?P<q>{QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:markdown\s+|"
        r"short\s+|separate\s+|distinct\s+)?(?P<list>bullet(?:ed)?[\s-]*points?|bullets|"
        r"bulleted\s+(?!lists?\b)\w+|numbered\s+(?!lists?\b)\w+)", _list_items, *UNITS_GATE,
        kind="bullet_count", example="3 bullet points",
        counter="Use between 3 and 5 bullet points."),
    Phrasing(
        rf"\b(?:{_LIST_VERBS_EN})(?:\s+(?:me|us))?\s+(?:(?P<q>{QUALIFIER_EN})\s+)?"
        rf"(?P<n>{EN_NUMBER})(?:\s*(?:-|–|to)\s*(?P<n2>{EN_NUMBER}))?\s+(?!(?:paragraphs?|sentences?|sections?|words?|parts?|chapters?|"
        r"lines?|times?)\b)[^.;:!?\n]{1,60}?\b(?:as|in|using|with|via|formatted\s+as|in\s+the\s+"
        rf"form\s+of)\s+(?:a\s+|an\s+)?(?:markdown\s+)?(?P<list>{_BULLETS_EN})\b", _list_items,
        kind="numbered_count", example="Outline 6 steps as a numbered list.",
        counter="Describe a snowy forest (as a numbered list of 6 items)."),
    Phrasing(
        rf"\b(?P<list>bullet(?:ed)?(?:[\s-]*point)?|numbered|markdown)\s+list\s+(?:of|with|"
        rf"containing)\s+(?:(?P<q>{QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})\s+\w+", _list_items,
        kind="numbered_count", example="as a numbered list of 4 items",
        counter="as a list of 4 bullet points"),
    Phrasing(
        rf"{NOT_RANGE_EN}\b(?:(?P<q>{QUALIFIER_EN})\s+)?(?P<n>{EN_NUMBER})(?P<more>\s+or\s+more)"
        rf"?\s+"
        r"(?:points|items|steps|reasons|tips|ideas|entries)\b[,\s][^.;:\n]{0,25}?\b(?:numbered|"
        r"number\s+them)\b", _numbered_points,
        kind="numbered_count", example="Outline 6 steps as a numbered list.",
        counter="Describe a snowy forest (as a numbered list of 6 items)."),
    Phrasing(
        rf"\bnumbered\s+list\s+(?:that|which)\s+(?:stops|ends|finishes)\s+(?:at|with)\s+item\s+"
        rf"(?P<n>{EN_NUMBER})\b", lambda m: count("numbered_count", "exactly",
        to_int(m.group("n"))),
        kind="numbered_count", example="Lay it out as a numbered list that stops at item 4.",
        counter="as a numbered list of 4 items"),
    # Chinese
    Phrasing(
        rf"{ZH_NOT_RANGE}(?<![第每])(?:(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST})\s*)?(?P<n>{ZH_NUMBER})\s*"
        rf"{_ZH_ITEM}(?!\s*(?:{_ZH_BULLETS}|{_ZH_NUMBERED}))[^。；！？\n]{{0,30}}?"
        rf"(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})", _list_items,
        kind="bullet_count", example="列出至少3条建议，使用无序列表。",
        counter="用无序列表写出你的三个建议。"),
    Phrasing(
        rf"(?:用|使用|以|采用)\s*(?:一个|一份)?\s*(?P<list>{_ZH_BULLETS}|{_ZH_NUMBERED})"
        rf"[^。；！？\n]{{0,12}}?{ZH_NOT_RANGE}(?<![第每])(?:(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST})\s*)?"
        rf"(?P<n>{ZH_NUMBER})\s*{_ZH_ITEM}",
        _list_items,
        kind="bullet_count", example="用项目符号列出三个优点。",
        counter="以项目符号列出3至5条建议。"),
)


# --- headings


def _headed(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """N parts, each under a heading of its own: N headings ("one heading per subsection, 2
    subsections", "分为四个部分，每部分用二级标题")."""
    return count("heading_count", "exactly", to_int(m.group("n")))


_PARTS_EN = r"(?:sub)?sections?|parts?|topics?|chapters?|segments?"
# the parts "each" is said of, right before it: "in at least 3 parts, each ..."
_PARTS_BEFORE = re.compile(rf"(?:\b(?P<q>{QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:"
                           rf"{PART_ADJECTIVE_EN}\s+)?(?:{_PARTS_EN})\s*,?\s+$", re.I)


def _each_headed(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """"4 sections, each with a ## heading": as many headings as the parts before "each" (the
    parts' own count stays a check of its own)."""
    parts = _PARTS_BEFORE.search(m.string, max(0, m.start() - 60), m.start())
    if not parts:
        return []
    relation = relation_of(parts.group("q")) if parts.group("q") else "exactly"
    return count("heading_count", relation, to_int(parts.group("n")))


_HEADING_EN = (r"(?:markdown\s+|#{1,6}\s+|h[1-6]\s+|level[\s-]\w+\s+|section\s+)?(?:sub)?"
               r"(?:heading|header)")
_ZH_HQ = rf"(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN})"

_HEADING_ROWS: tuple[Phrasing, ...] = (
    # headings counted in Chinese: "包含至少3个二级标题"
    Phrasing(
        rf"(?:包含|包括|使用|设置|设|有|分为|分成)\s*{_ZH_HQ}?\s*(?P<n>{ZH_NUMBER})\s*个"
        rf"(?:[一二三]级|小|子)?"
        r"标题", lambda m: count("heading_count", zh_relation_of(m.group("q") or ""),
                               to_int(m.group("n"))),
        kind="heading_count", example="文章需要有3个小标题。", counter="需要至少两个小标题。"),
    # N parts, each under a heading of its own
    Phrasing(
        r"\beach\s+(?:one\s+)?(?:with|under|having|has|gets|getting|"
        rf"(?:starting|opening|beginning)\s+with|headed\s+by|introduced\s+by)\s+(?:a|an|one"
        rf"|its\s+own)"
        rf"\s+{_HEADING_EN}", _each_headed,
        kind="heading_count", example="Write it in 3 sections, each with its own ## heading.",
        counter="Write a note to the 3 departments, each with its own manager."),
    # "a markdown header for each of the 4 sections", "give each of the 3 parts a heading"
    Phrasing(
        rf"\b(?:one|a|an)\s+{_HEADING_EN}\s+(?:per|for|on|above|over)\s+(?:each|every)\s+"
        rf"(?:one\s+)?of\s+"
        rf"(?:the|your|these|those)\s+(?P<n>{EN_NUMBER})\s+(?:{_PARTS_EN})\b|\beach\s+of\s+(?:the"
        rf"|your)\s+"
        rf"(?P<n2>{EN_NUMBER})\s+(?:{_PARTS_EN})\s+(?:a|an|its\s+own)\s+{_HEADING_EN}",
        lambda m: count("heading_count", "exactly", to_int(m.group("n") or m.group("n2"))),
        kind="heading_count", example="Give each of the 3 parts its own heading.",
        counter="Write it in 3 sections, each with its own ## heading."),
    Phrasing(
        rf"\b(?:one|a|an)\s+{_HEADING_EN}\s+(?:per|for\s+each|for\s+every)\s+(?P<unit>(?:sub)"
        rf"?section|"
        rf"part|topic|chapter)\s*[,;]\s*(?P<n>{EN_NUMBER})\s+(?P=unit)s?\b", _headed,
        kind="heading_count", example="* one ## heading per subsection, 2 subsections",
        counter="Italicise one phrase per paragraph."),
    Phrasing(
        rf"(?P<n>{ZH_NUMBER})\s*个?\s*{ZH_SECTIONS}\s*[，,]?\s*每(?:个|一)?\s*{ZH_SECTIONS}?\s*"
        rf"(?:都|均)?"
        r"(?:要|需|需要|须|请|应)?\s*(?:用|有|加|配|设|带|使用)\s*(?:一个)?\s*(?:markdown|md)?\s*"
        r"(?:[一二三]级|小|#{1,6}\s*)?标题", _headed,
        kind="heading_count", example="分为三个部分，每部分都要有小标题。",
        counter="文章需要有3个小标题。"),
)

# the heading noun family's rows (`families`), one (example, counter-example) per structure
_HEADINGS = noun_rows("heading_count", (
    # before the noun; labelled; after the noun; after the noun with a unit; in parentheses;
    # a limit; referred back to
    ("需要至少两个小标题。", "需要一个用<< >>包起来的标题。"),
    ("Headings: 2-4, markdown style.", "with 4 markdown headings"),
    ("Use ### 做三级标题，共 3 个。", "Use Markdown，at least 2 个二级标题 (##)。"),
    ("标题不少于两个，使用#号标记。", "需要至少两个小标题。"),
    ("Use markdown headings (exactly 3).", "Use markdown headings (level 2)."),
    ("Limit the headings to 4.", "Limit the headings to plain words."),
    ("Divide it with headings, 3 of them, markdown ###.",
     "break it up with 3 section headings (markdown #) pls"),
))

# the bullet noun family's rows and both list styles' (`families`), one (example,
# counter-example) per structure
_BULLETS = noun_rows("bullet_count", (
    # before the noun; labelled; after the noun; after the noun with a unit; in parentheses;
    # a limit; referred back to
    ("3 bullet points", "Write 3 paragraphs about cats with bullet points."),
    ("Bullet points: 3-5.", "Bullet points: 3 words each."),
    ("写一个 to-do list，用 bullet points，5 条。",
     "写一个 product intro，用 **bold** 标出 3 个 selling points。"),
    ("bullet points 数量需要5条。", "bullet points 数量需要简短。"),
    ("Use bullet points (exactly 4).", "Use bullet points (short ones)."),
    ("Limit the bullet points to 5.", "Limit the bullet points to short phrases."),
    ("bullets pls. like 5 of them", "bullets pls. like 5 words each"),
))
_BULLET_STYLE = style_rows("bullet_count", (
    # in parentheses; the style, then its size; the size, then "as" the style; "there should be";
    # a size after a full stop; a spec list; an adjective; a bounded size; a verb
    ("Format: bulleted list (3–5 items).", "Format: numbered list (5–7 items)."),
    ("用项目符号列出三个优点。", "第三个要点用列表展开。"),
    ("Give me five tips as bullet points.",
     "Give tips for packing a light suitcase (as a list of five bullet points)."),
    ("Format it as bullet points; there should be exactly three.",
     "Format it as bullet points; there should be no intro."),
    ("Bullets. Six of them.", "Six of them."),
    ("bullet list\n2. seven items", "bullet list\n2. seven words"),
    ("3 bullet points", "Write 3 paragraphs about cats with bullet points."),
    ("List format please, with bullets, max 4.", "Respond with a 4-item bulleted list."),
    ("Keep it tight, bullet the 3 deliverables.", "Keep it to 3 sentences or fewer."),
))
_NUMBERED_STYLE = style_rows("numbered_count", (
    # in parentheses; the style, then its size; the size, then "as" the style; "there should be";
    # a size after a full stop; a spec list; an adjective; a bounded size; a verb; numbers from 1
    ("Format: numbered list (5–7 items).", "Format: bulleted list (3–5 items)."),
    ("以编号形式给出五个步骤。", "用列表形式给出三个理由。"),
    ("Outline 6 steps as a numbered list.",
     "Describe a snowy forest (as a numbered list of 6 items)."),
    ("numbering for the steps; there should be exactly three.",
     "There should be exactly 2 highlighted sections."),
    ("Should it be in a numbered list? Two items, obviously.",
     "Should it be in a numbered list? Yes, obviously."),
    ("- numbered list\n- 6 steps", "Outline 6 steps as a numbered list."),
    ("3 numbered items", "Include a numbered list with at least 3 items."),
    ("number them, 6 max", "Number them 1 to 8."),
    ("Number the 5 steps.", "Number the steps."),
    ("pls number ur tips 1 to 4", "List at least 4 points and number them 1."),
))

TABLES = (Table(_FLAGS, _PHRASINGS), _BULLETS, _BULLET_STYLE, _NUMBERED_STYLE,
          Table(_FLAGS, _HEADING_ROWS), _HEADINGS)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
