"""The Chinese ways a request names words its response must or must not use, and the mixed
ones: a verb of using and the quoted words ("文中必须包含“绿色出行”这个词", "要提到“无尘”和“除臭”
这两个卖点", "文章里要出现“乡愁”和“故乡”两个词"), how often ("至少提到“…”三次", "“春天”一词要出现
2次以上", "务必提及“碳中和”，次数不少于两次"), an unquoted list after a colon ("使用以下关键词：
创新、协作、共赢", "关键词：数字化、转型"), and the forbidden forms ("不得出现“第一”这个词",
"禁止使用“最好”“第一”等词语"); package-internal.

Quoted words that name parts ("包含“引言”“正文”两部分") or a verb negated before it are no
keyword."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import ZH_NUMBER, to_int
from rubrics.checks.phrasings.common import _ZH_AT_LEAST, _ZH_AT_MOST, _ZH_START, Build, _count
from rubrics.checks.phrasings.short import _QUOTE_LIST, quoted_words, zh_relation_of

_I = re.I | re.S | re.M
_ZH_NEGATION = (r"(?:不要|不能|不得|禁止|避免|不可|切勿|请勿|严禁|不允许|不准|不许|勿|切忌|杜绝|"
                r"不应|不宜|别)")
_ZH_NEGATED = re.compile(rf"{_ZH_NEGATION}\s*$")
_ZH_NOUN = r"(?:关键词|关键字|词语|词汇|字眼|词组|短语|这个词|一词|等词|这些词|词)"
_ZH_Q = rf"(?:{_ZH_AT_LEAST}|{_ZH_AT_MOST})"
_USE = (r"(?:包含|包括|使用|出现|提到|提及|融入|带有|含有|加入|嵌入|植入|用到|写入|写到|写进|"
        r"涵盖|体现|带上|用上|放入|mention|include)")
_MUST = r"(?:要|需|需要|必须|应|应该|应当|得|务必|一定要|请)?"
# after the words: what they are ("这个词", "这两个卖点"), or a count of parts they name
_WHAT = (r"(?:这个词|一词|这个关键词|等词|这几个词|(?:这|等)?(?:[两三四五六几]|\d)?个?(?:词|关键词|"
         r"卖点|概念|短语|说法|字眼|元素))")
_PARTS_AFTER = re.compile(r"\s*(?:等|这)?[两三四五六七八九十几\d]*个?"
                          r"(?:部分|板块|章节|环节|模块|方面|栏目|段|节)")
# how often, said after the words: "出现2次以上", "，次数不少于两次"
_TIMES = (rf"(?:\s*[，,]?\s*(?:次数|出现次数|出现的次数)?\s*{_MUST}\s*(?P<q>{_ZH_Q})?\s*"
          rf"(?:出现|提到|提及|使用)?\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次(?P<post>以上)?)?")
_LIST_NOUN = r"(?:关键词|关键字|词语|词汇)"
# an unquoted word of a list after a colon
_ITEM = r"[\u4e00-\u9fffA-Za-z0-9]{1,12}"
_BARE_LIST = (rf"(?P<bare>{_ITEM}(?:\s*[、，,/]\s*{_ITEM}|\s*(?:和|及|与)\s*{_ITEM}){{0,9}})"
              r"(?=\s*(?:[。；;！!（()）\n]|$))")


def _words(m: re.Match[str]) -> list[str]:
    groups = m.groupdict()
    if groups.get("words"):
        return quoted_words(groups["words"])
    bare = groups.get("bare") or ""
    if re.search(r"[、，,/]", bare):
        return [w for w in re.split(r"\s*[、，,/]\s*", bare) if w]
    parts = re.split(r"\s*(?:和|及|与)\s*", bare)
    # "和" inside a word ("碳中和") is no separator: split only into words of two or more
    return parts if all(len(w) >= 2 for w in parts) else [bare]


def _used(polarity: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        words = _words(m)
        if polarity == "use" and _ZH_NEGATED.search(m.string, max(0, m.start() - 4), m.start()):
            return []
        if polarity == "forbid":
            return [("forbidden_word", {"word": w}) for w in words]
        if m.groupdict().get("words") and _PARTS_AFTER.match(m.string, m.end("words")):
            return []
        groups = m.groupdict()
        n = to_int(groups["n"]) if groups.get("n") else None
        qualifier = groups.get("q") or groups.get("q2") or ""
        relation = ("at least" if groups.get("post") else zh_relation_of(qualifier)) if n \
            else "at least"
        return [check for w in words for check in _count("keyword", relation, n or 1, word=w)]
    return build


def _tags(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Hashtags to use, each a keyword; none when the verb is negated."""
    if _ZH_NEGATED.search(m.string, max(0, m.start() - 4), m.start()) \
            or re.search(r"\b(?:not?|never|don['’]?t)\s+$",
                         m.string[max(0, m.start() - 12):m.start()], re.I):
        return []
    return [check for tag in re.findall(r"#[A-Za-z][\w-]*", m.group("tags"))
            for check in _count("keyword", "at least", 1, word=tag)]


_RULES: tuple[tuple[str, Build], ...] = (
    # "包含关键词“a”“b”", "文中需要提到“a”和“b”两个关键词", "'a''b'等关键词"
    (rf"{_USE}(?:以下|如下)?(?:{_ZH_NOUN})[：:]?\s*(?P<words>{_QUOTE_LIST})(?:\s*(?:这个词|一词|"
     rf"等词)?\s*(?P<q>{_ZH_Q})?\s*出现\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次)?",
     _used("use")),
    (rf"(?P<words>{_QUOTE_LIST})\s*等?(?:关键词|关键字)", _used("use")),
    # a verb of using and the words: "必须包含“绿色出行”这个词", "务必提及“碳中和”，次数不少于两次"
    (rf"{_USE}\s*(?P<words>{_QUOTE_LIST})\s*{_WHAT}?{_TIMES}", _used("use")),
    # the words as the subject: "“春天”一词要出现2次以上", "“AI”在文中至少出现三次"
    (rf"(?P<words>{_QUOTE_LIST})\s*(?:这个词|一词|这个关键词|等词|这几个词)?\s*{_MUST}\s*"
     rf"(?:在[^。；\n]{{0,8}}中)?\s*{_MUST}\s*(?P<q>{_ZH_Q})?\s*{_MUST}\s*出现\s*(?P<q2>{_ZH_Q})?\s*"
     rf"(?P<n>{ZH_NUMBER})\s*次(?P<post>以上)?", _used("use")),
    (rf"{_ZH_START}(?P<q>{_ZH_Q})\s*(?:提到|提及|使用|用到|写到|出现)\s*(?P<words>{_QUOTE_LIST})\s*"
     rf"(?:这个词|一词)?\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次", _used("use")),
    (rf"{_ZH_START}(?P<q>{_ZH_Q})?\s*(?:提到|提及|使用|用到|写到|出现)\s*(?P<q2>{_ZH_Q})?\s*"
     rf"(?P<n>{ZH_NUMBER})\s*次\s*(?P<words>{_QUOTE_LIST})", _used("use")),
    # an unquoted list after a colon: "使用以下关键词：创新、协作、共赢", "关键词：数字化、转型"
    (rf"(?:{_USE}\s*)?(?:以下|如下)?{_LIST_NOUN}\s*[：:]\s*{_BARE_LIST}", _used("use")),
    (rf"(?:{_USE}\s*)?(?:以下|如下)?{_LIST_NOUN}\s*[（(]\s*{_BARE_LIST}\s*[）)](?!\s*[：:])",
     _used("use")),
    # hashtags with no quotes: "带上 #summer 和 #travel 两个 hashtag"
    (rf"(?<!结尾)(?<!末尾)(?<!最后)(?<!文末)(?:{_USE}|带上|\b(?:use|include|add)\b)\s*(?:the\s+)?"
     r"(?:hashtags?\s+)?(?P<tags>#[A-Za-z][\w-]*(?:\s*(?:和|及|、|,|，|and|&)\s*#[A-Za-z][\w-]*)*)",
     _tags),
    # forbidden: "不得出现“第一”这个词", "禁止使用“最好”“第一”等词语"
    (rf"{_ZH_NEGATION}(?:使用|出现|提到|提及|包含|用|写|说)(?:以下|如下|任何)?(?:{_ZH_NOUN})?[：:]?\s*"
     rf"(?P<words>{_QUOTE_LIST})", _used("forbid")),
    (rf"(?P<words>{_QUOTE_LIST})\s*(?:等|这个|这些)?(?:{_ZH_NOUN})?\s*(?:不得|不能|不要|不可|禁止|"
     r"严禁|不允许|不应)(?:出现|使用)", _used("forbid")),
)

RULES: tuple[tuple[re.Pattern[str], Build], ...] = tuple(
    (re.compile(p, _I), b) for p, b in _RULES)
