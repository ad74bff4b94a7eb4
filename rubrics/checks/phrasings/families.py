"""The structures a count takes around a family of nouns or a list style, as rows the kind
modules draw on: a noun family per kind ("bullet points", "dot points", "subheadings",
"markdown headers", "template fields in square brackets", "paras", "占位符", "小标题", "段落";
`noun_rows`), a list style per list kind ("bulleted list", "ordered list", "numbered", "项目
符号", "编号", "序号"; `style_rows`), and the structures a count takes around them:
- a count before the noun: "at least 5 subheadings", "2 or more [bracketed] placeholders",
  "至少包含3个 markdown headings", "3个以上的小标题", "three paragraphs long";
- a labelled count: "Headings: 2-4", "Paragraph count: 2", "Placeholders: at least 3";
- a count after the noun, said of it: "square-bracket fields ..., at least five of them",
  "用方括号标出需要填写的内容，至少5处", "标题不少于两个", "bullets pls. like 5 of them";
- a list's style, then its size: "an ordered list of exactly five steps", "numbered, 7
  steps", "用编号列表，exactly 4 items", "步骤请标上序号，一共6步", "numbering for the steps;
  there should be exactly three", "ordered list (1., 2., 3., ...), a dozen entries",
  "numbered 1 through 5".

A bare count said to be approximate ("a numbered checklist, roughly 10 things") is about N,
between floor(0.8 N) and ceil(1.2 N).

A count of things with no style named ("give me 10 name ideas"), a count per part ("2 per
section", "每部分3条", "主歌至少2段") and a count that is a length ("each under 15 words") is
no check."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, about
from rubrics.checks.phrasings.shared import (
    ABOUT_EN,
    CJK,
    COUNT,
    Build,
    Phrasing,
    Table,
    count,
    count_relation,
)

# the flags of the rows, and how far a row's match reaches from its noun, style or letter
# word: a count and two words before it, a gap of up to 60 characters and a count with
# its tail after it
FLAGS = re.I | re.S | re.M
REACH = (100, 160)
# after a count: a length or a share, never a number of items
_NOT_ITEMS = (r"(?!\s*(?:个)?\s*(?:words?|sentences?|characters?|letters?|minutes?|seconds?|"
              r"pages?|times?|%|percent|字|词|单词|句|分钟|秒|页|次)\b)")
_PER_AFTER = re.compile(r"\s*(?:[\w-]+\s+){0,2}?(?:per|each|apiece|for\s+each|in\s+each|every)"
                        r"\b|\s*(?:每|/\s*(?:each|per))", re.I)
_PER_BEFORE = re.compile(r"(?:每|\beach|\bper|\bevery)\s*[^\s,.;，。；]{0,6}\s*$", re.I)
# "each" right before the noun a later count refers back to: every one of the things counted
# ("Show each blank as a word in square brackets, ... and include ten of them"), not a count
# per part
_EVERY_ONE = re.compile(r"\b(?:each|every)\s+$", re.I)
# the end of a range before a number: "3-5", "between 3 and 5", "3 or 4"
_RANGE_BEFORE = re.compile(r"(?:[-–—~/\d]\s*|\b(?:to|or|and)\s+)$", re.I)
# a count right after a part of a song or poem is that part's: "主歌至少2段"
_SONG_PART = re.compile(r"(?:歌|诗|词|曲|台词|对白|verses?|stanzas?|choruse?s?)\s*$", re.I)
# parts of the text, which a number heads rather than lists: "3 numbered sections"
_SECTIONS = r"(?:sections?|parts?|chapters?)"
_EACH = re.compile(r"每|\b(?:each|every|per)\b", re.I)

# what opens a Chinese count of paragraphs with no qualifier: a verb of dividing or writing, a
# bound, or the start of a clause
_ZH_PARAGRAPHS_LEAD = re.compile(r"(?:(?<![部满评充十百得积])分(?:为|成)?|写|用|共|控制在|为|在|成|"
                                 r"有|包含|包括|^|[，,。；;：:\n\s])\s*$")

# verbs whose object is the response's own paragraphs: "separate the 3 paragraphs with ***",
# "the break between each of your 3 paragraphs"
_HANDLED = re.compile(r"\b(?:(?:separate|split|divide|space)\s+(?:the\s+|your\s+|its\s+)?|"
                      r"between\s+each\s+of\s+(?:the\s+|your\s+))$", re.I)

# --- the noun families
_BULLETS = (r"(?:markdown\s+|separate\s+|short\s+)?(?:bullet(?:ed)?[\s-]*(?:points?|pts?)|bullets?|"
            r"dot[\s-]*points?|bulleted\s+(?:items?|lines?))")
_HEADINGS = (r"(?:(?:markdown|section|sub|level[\s-]?\d|h[1-6]|#{1,6})[\s-]*)*(?:sub)?"
             r"(?:headings?|headers?)|(?:markdown\s*|md\s*|#{1,6}\s*)?"
             r"(?:[一二三]级|小|子|分|章节)?标题")
_PLACEHOLDERS = (r"\[(?:placeholders?|blanks?|fields?|brackets?)\]|\[\s*\](?!\()|"
                 r"(?:\[?(?:bracketed|"
                 r"square[\s-]*bracket(?:ed)?)\]?\s+|\[[^\]\n]{1,30}\]\s*)?(?:placeholders?|(?:template\s+|fill[\s-]*in\s+|"
                 r"fillable\s+|editable\s+|blank\s+)?fields?|blanks?|slots?)|"
                 r"(?:bracketed|square[\s-]*bracket(?:ed)?)\s+(?:variables?|tokens?)|"
                 r"占位符|填空|空格|空白处?|方括号|(?<=[个处])空(?![调气间中白格])")
_PARAGRAPHS = (r"paragraphs?|paras\b|para\b|自然段|段落|段话|"
               r"段(?![时距路旅经历故对视音录代论位子式])")
_FAMILIES = {"bullet_count": _BULLETS, "heading_count": _HEADINGS,
             "placeholder_count": _PLACEHOLDERS, "paragraph_count": _PARAGRAPHS}
# what a placeholder count without the word "placeholder" needs in its sentence
_BRACKETS = re.compile(r"(?<!\[)\[(?![\[\s]*##)|\bbracket(?:ed|s)?\b|方括号", re.I)
# a heading named "标题" alone is the text's title unless markdown is in the sentence
_MARKDOWN = re.compile(r"#|markdown", re.I)

# --- the list styles and what a list holds
_STYLES = {
    "bullet_count": (r"(?:bullet(?:ed)?[\s-]*(?:point)?[\s-]*list|bullet(?:ed)?[\s-]*points?|"
                     r"bullets|dot[\s-]*points?(?:\s+list)?|dot-point\s+list|unordered\s+list|"
                     r"markdown\s+(?:bullets|list)|项目符号|无序列表|圆点(?:符号)?|要点(?:形式|式)|"
                     r"列表形式|条目(?:形式|式)|[“\"'‘][-•*][”\"'’](?:开头|标记|标出)|checklist|dash(?:ed)?\s+list|"
                     r"(?:list\s+)?with\s+(?:dashes|hyphens)|(?:use|using)\s+(?:dashes|hyphens))"),
    "numbered_count": (r"(?:numbered(?:\s+(?:list|items?|points?|steps?|entries))?|ordered\s+list|"
                       r"numbering|number\s+(?:them|these|those|each|the\s+\w+|your\s+\w+)|"
                       r"有序列表|编号列表|编号|序号|1\s*[.、)]\s*2\s*[.、)](?:\s*3\s*[.、)])?)"),
}
_ITEM = (r"(?:\s*(?:个|条|项|点|步)\s*[\u4e00-\u9fff]{0,4}|\s+(?:[\w-]+\s+)?(?:items?|steps?|"
         r"points?|entries|entry|tips?|reasons?|ideas?|things?|lines?|questions?|rules?|facts?|"
         r"examples?|benefits?|options?|suggestions?|recommendations?|dot\s+points?|bullets?|"
         r"of\s+them|in\s+total|total|to\s+the\s+list)\b)")


# the words between a noun and a count said of it: any but a sentence's end, or examples in
# parentheses whole ("placeholders wherever a detail is unknown (e.g. [launch date], [price]),
# but no more than 6 of them")
_GAP = r"(?:[^.!?。！？\n]|[(（][^()（）\n]{1,80}[)）])"


def _first_number(m: re.Match[str]) -> str:
    return "n1" if m.groupdict().get("n1") else "n"


def _sentence(m: re.Match[str]) -> str:
    text = m.string
    start = max(text.rfind(c, 0, m.start()) for c in ".!?。！？\n")
    ends = [i for i in (text.find(c, m.end()) for c in ".!?。！？\n") if i >= 0]
    return text[start + 1:min(ends) if ends else len(text)]


def _counted(kind: str, *, bare_english_paragraphs: bool = True) -> Build:
    """A count of the family's things; not when it is per part, the end of a range, an
    article ("一个"), a placeholder count with no bracket named, or a heading "标题" with no
    markdown named."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        groups = m.groupdict()
        text, noun, qualified = m.string, groups.get("noun") or "", groups.get("q")
        every_one = groups.get("noun") is not None and m.start("noun") == m.start() \
            and _EVERY_ONE.search(text, 0, m.start())
        if _PER_AFTER.match(text, m.end()) or not every_one and _PER_BEFORE.search(
                text[max(0, m.start() - 12):m.start()]):
            return []
        if groups.get("n1") and m.start("n1") == m.start() and _RANGE_BEFORE.search(
                text, max(0, m.start() - 6), m.start()):
            return []
        if (groups.get("n1") or "").strip() == "一" and not qualified:
            return []
        if "tail" in groups and not (groups["tail"] or qualified or groups.get("n2")):
            return []
        if not bare_english_paragraphs and kind == "paragraph_count" \
                and re.match(r"para", noun, re.I) and not (
                    qualified or groups.get("post") or groups.get("n2") or groups.get("long")
                    or CJK.search(m.group(0)) or _HANDLED.search(text, 0, m.start())):
            return []  # "5 paragraphs" alone: the units rules read it, with its verb
        if kind == "paragraph_count" and CJK.search(noun) and not qualified \
                and not _ZH_PARAGRAPHS_LEAD.search(text, 0, m.start(_first_number(m))):
            return []  # "正文部分4-5段", "满分4-5段": no verb that makes it a division
        sentence = _sentence(m)
        if kind == "placeholder_count" and not re.search(r"placeholder|占位符", noun, re.I) \
                and not _BRACKETS.search(sentence):
            return []
        if kind == "heading_count" and noun.strip() == "标题" and not _MARKDOWN.search(sentence):
            return []
        if _SONG_PART.search(text, max(0, m.start() - 4), m.start()):
            return []
        if groups.get("style") is not None and _EACH.search(groups["style"]):
            return []
        relation, n, upper = count_relation(m, "exactly")
        if relation == "exactly" and n is not None and _approximate(m):
            relation, (n, upper) = "between", about(n)
        return count(kind, relation, n, upper,
                     **({"divider": None} if kind == "paragraph_count" else {}))
    return build


# a count said to be approximate: "roughly 10 things", "5 bullet points or so"
_ABOUT_BEFORE = re.compile(rf"\b(?:{ABOUT_EN})\s+$", re.I)
_OR_SO_AFTER = re.compile(r"\s*,?\s+(?:or\s+so|give\s+or\s+take|or\s+thereabouts|more\s+or\s+"
                          r"less)\b", re.I)


def _approximate(m: re.Match[str]) -> bool:
    """Whether a bare count is said to be about N (a word of approximation right before its
    number, or "or so" after the match): between floor(0.8 N) and ceil(1.2 N)."""
    first = _first_number(m)
    at = m.start(first) if m.groupdict().get(first) else m.start()
    return bool(_ABOUT_BEFORE.search(m.string, max(0, at - 40), at)
                or _OR_SO_AFTER.match(m.string, m.end()))


def _family_rules(kind: str) -> Iterator[tuple[str, str, Build]]:
    noun = _FAMILIES[kind]
    # a count before the noun: "at least 5 subheadings", "3个以上的小标题"
    yield noun, (rf"(?<![第每#A-Za-z]){COUNT}{_NOT_ITEMS}\s*(?:个|条|处|项)?"
                 rf"(?P<post2>以上|以内|以下)?\s*(?:的\s*)?(?:[\w-]+\s+)?"
                 rf"(?P<noun>{noun})(?![A-Za-z-])(?P<long>\s+long\b)?"
                 r"(?P<post3>以内|以下|之内|以上)?"), \
        _counted(kind, bare_english_paragraphs=False)
    # a labelled count: "Headings: 2-4", "Paragraph count: 2", "Placeholders: at least 3"
    yield noun, (rf"(?:^|(?<=[.;,，；。：:]))\s*(?:[-*•]\s*)?(?:(?:number|count)\s+of\s+)?"
                 rf"(?P<noun>{noun})(?:\s*(?:count|number|数量|数))?\s*[:：]\s*{COUNT}"
                 r"(?!\s*(?:words?|字|sentences?))"), _counted(kind)
    # the noun, then its count in the same sentence: "..., at least five of them", "共4个"
    yield noun, (rf"(?P<noun>{noun})(?![A-Za-z-]){_GAP}{{0,60}}?"
                 r"(?:[,，;；]|\s?[—–]|\s-\s)\s*(?:(?:and|but)\s+)?(?:there\s+should\s+be\s+|(?:I|we)\s+(?:need|want|require)\s+|"
                 r"(?:put\s+in|include|add|use|leave|give\s+me|make\s+it|have)\s+|"
                 r"(?:一共|总共|共)\s*)?"
                 rf"{COUNT}{_NOT_ITEMS}(?P<tail>\s*(?:个|处|"
                 r"条|项)|\s+(?:of\s+(?:them|['’]?em)|in\s+total|total|of\s+those))?"
                 r"(?=\s*[,.;!?，。；！）)\n]|\s*$)"), _counted(kind)
    yield noun, (rf"(?P<noun>{noun})(?![A-Za-z-])\s*(?:数量|数目|数)?\s*(?:要|需|需要|应|须|"
                 rf"必须)?\s*{COUNT}(?P<tail>\s*(?:个|处|条|项))"), _counted(kind)
    # a count in parentheses after the noun: "placeholders ... (exactly two)"
    yield noun, (rf"(?P<noun>{noun})(?![A-Za-z-])[^.!?。！？\n(（]{{0,60}}?[(（]\s*{COUNT}"
                 r"(?:\s*(?:items?|entries|of\s+them|in\s+total|total|个|条|处))?\s*[)）]"), \
        _counted(kind)
    # "limit the bullets to 5", "cap headings at 3"
    yield noun, (rf"\b(?:limit|cap|restrict|keep)\s+(?:the\s+(?:number|count)\s+of\s+)?"
                 rf"(?:the\s+|your\s+)?(?P<noun>{noun})(?![A-Za-z-])\s+(?:to|at)\s+(?:just\s+|"
                 rf"only\s+)?{COUNT}"), _limited
    # "bullets pls. like 5 of them": the count refers back to the noun across a full stop
    yield noun, (rf"(?P<noun>{noun})(?![A-Za-z-])[^!?。！？\n]{{0,40}}?(?:[.;]\s+(?:like\s+|"
                 rf"and\s+)?|\s+)(?:there\s+should\s+be\s+)?{COUNT}{_NOT_ITEMS}\s+(?:[a-z]+\s+)?"
                 r"(?:of\s+them|in\s+total|total)\b"), _counted(kind)


def _limited(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A count a limit states: at most N unless it says otherwise."""
    kind = next(k for k, noun in _FAMILIES.items() if re.fullmatch(noun, m.group("noun"), FLAGS))
    relation, n, upper = count_relation(m, "at most")
    return count(kind, relation, n, upper,
                 **({"divider": None} if kind == "paragraph_count" else {}))


def _bounded(kind: str) -> Build:
    """A count after a list's style that carries its own bound ("number them, 6 max")."""
    counted = _counted(kind)

    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        groups = m.groupdict()
        return counted(m) if groups.get("q") or groups.get("post") or groups.get("n2") else []
    return build


_ADJECTIVES = {"bullet_count": r"bullet(?:ed)?", "numbered_count": r"numbered"}
_VERBS = {"bullet_count": r"bullet(?:[\s-]point)?", "numbered_count": r"number"}


def _style_rules(kind: str) -> Iterator[tuple[str, str, Build]]:
    style = _STYLES[kind]
    # "numbered steps (no more than 6)"
    yield style, (rf"(?P<noun>{style})(?![A-Za-z-])(?:\s+[a-z]+)?\s*[(（]\s*{COUNT}"
                  r"(?:\s*(?:items?|entries|steps?|points?|个|条|项))?\s*[)）]"), _counted(kind)
    # "an ordered list of exactly five steps", "用 numbered list 列出 5 个 tips", "ordered list
    # (1., 2., 3., ...), a dozen entries" (an example of the style in parentheses on the way)
    yield style, (rf"(?P<noun>{style})(?![A-Za-z-])(?:\s*(?:list|列表))?"
                  rf"(?P<style>(?:[^.!?。！？\n(（]|[(（][^()（）\n]{{1,40}}[)）]){{0,40}}?)"
                  rf"(?<![第每A-Za-z0-9]){COUNT}{_NOT_ITEMS}{_ITEM}"), _counted(kind)
    # "a list of 3 action items, formatted as markdown bullets"
    yield style, (rf"(?<![第每A-Za-z]){COUNT}{_NOT_ITEMS}\s+(?:[\w-]+\s+){{0,3}}?[\w-]+\s*,?"
                  r"\s+(?:as|in|using|formatted\s+as|in\s+the\s+form\s+of)\s+(?:a\s+|an\s+)?"
                  rf"(?P<noun>{style})(?![A-Za-z-])"), _counted(kind)
    # "numbering for the steps; there should be exactly three", "in a numbered list? Two
    # items, obviously."
    for after in (rf"there\s+(?:should|must|will)\s+be\s+{COUNT}(?=\s*[.;!]|\s*$)",
                  rf"{COUNT}{_NOT_ITEMS}{_ITEM}"):
        yield style, (rf"(?P<noun>{style})(?![A-Za-z-])[^!?。！？\n]{{0,40}}?[.;?!]\s+"
                      rf"{after}"), _counted(kind)
    # a spec list's items, one the style and the next its size: "1. bullet list\n2. seven
    # items"
    yield style, (rf"(?P<noun>{style})(?![A-Za-z-])(?:\s+list)?\s*[.;]?[ \t]*\n\s*"
                  rf"(?:\d{{1,2}}[.)、]|[-*•])?\s*{COUNT}{_NOT_ITEMS}{_ITEM}"
                  r"(?=\s*[.;]?[ \t]*(?:\n|$))"), \
        _counted(kind)
    # a count before a style adjective: "3 to 5 numbered installation steps"
    adjective = _ADJECTIVES[kind]
    yield rf"\b{adjective}\b", (rf"(?<![第每A-Za-z]){COUNT}{_NOT_ITEMS}\s+"
                                rf"(?P<noun>{adjective})\s+(?!{_SECTIONS}\b)"
                                r"(?:[\w-]+\s+){0,2}?[\w-]+"), \
        _counted(kind)
    # "number them, 6 max": a bounded count after the style
    yield style, (rf"(?P<noun>{style})(?![A-Za-z-])[^.!?。！？\n]{{0,20}}?[,，;；]\s*{COUNT}"
                  r"(?=\s*[,.;!?，。；！)\n]|\s*$)"), _bounded(kind)
    # "bullet the 3 deliverables", "number the 5 steps"
    verb = _VERBS[kind]
    yield rf"\b{verb}\b", (rf"\b{verb}\s+(?:the|your|these|those|all)\s+{COUNT}\s+[a-z]+"), \
        _counted(kind)
    if kind == "numbered_count":
        # "number your tips 1 to 4", "numbered 1 through 5"
        yield r"\bnumber(?:ed)?\b", (r"\b(?:number\s+(?:your|ur|the|them|these|those)\s*"
                                     r"(?:[\w-]+\s+)?|numbered\s+)(?:from\s+)?1\s*(?:to|-|–|"
                                     rf"through|thru)\s*(?P<n1>{EN_NUMBER})\b"), \
            _counted("numbered_count")


def _rows(kind: str, made: Iterator[tuple[str, str, Build]],
          examples: Sequence[tuple[str, str]]) -> tuple[Phrasing, ...]:
    rows = list(made)
    if len(rows) != len(examples):
        raise ValueError(f"{kind}: {len(rows)} rows, {len(examples)} examples")
    return tuple(Phrasing(pattern, build, gate, REACH, kind=kind, example=example,
                          counter=counter)
                 for (gate, pattern, build), (example, counter) in zip(rows, examples, strict=True))


def noun_rows(kind: str, examples: Sequence[tuple[str, str]]) -> Table:
    """The rows reading a count of the kind's noun family, one per structure above, each with
    the (example, counter-example) the kind module gives it."""
    return Table(FLAGS, _rows(kind, _family_rules(kind), examples))


def style_rows(kind: str, examples: Sequence[tuple[str, str]]) -> Table:
    """The rows reading a count of a list's items around its style, each with the (example,
    counter-example) the kind module gives it."""
    return Table(FLAGS, _rows(kind, _style_rules(kind), examples))
