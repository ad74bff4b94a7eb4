"""The ways a Chinese or mixed request names words its response must or must not use (the
English ones are `keywords`'s): a verb of using and the quoted words ("文中必须包含“绿色出行”
这个词", "要提到“无尘”和“除臭”这两个卖点"), how often ("至少提到“…”三次", "“春天”一词要出现2
次以上"), an unquoted list after a colon ("使用以下关键词：创新、协作、共赢", "关键词：数字化、
转型"), hashtags ("带上 #summer 和 #travel"), and the forbidden forms ("不得出现“第一”这个词",
"禁止使用“最好”“第一”等词语").

Quoted words that name parts ("包含“引言”“正文”两部分") and a verb negated before it are no
keyword."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import ZH_NUMBER, to_int
from rubrics.checks.phrasings.shared import (
    QUOTE_LIST,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_START,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    quoted_words,
    rules_of,
    zh_relation_of,
)
from rubrics.checks.phrasings.words.keywords import negated_before

_I = re.I | re.S
_ZH_NEGATION = (r"(?:不要|不能|不得|禁止|避免|不可|切勿|请勿|严禁|不允许|不准|不许|勿|切忌|杜绝|"
                r"不应|不宜|别)")
_ZH_NEGATED = re.compile(rf"{_ZH_NEGATION}\s*$")
_ZH_NOUN = r"(?:关键词|关键字|词语|词汇|字眼|词组|短语|这个词|一词|等词|这些词|词)"
_ZH_Q = rf"(?:{ZH_AT_LEAST}|{ZH_AT_MOST})"
_ZH_USE = (r"(?:包含|包括|使用|出现|提到|提及|融入|带有|含有|加入|嵌入|植入|用到|写入|写到|写进|"
           r"涵盖|体现|带上|用上|放入|mention|include)")
_ZH_MUST = r"(?:要|需|需要|必须|应|应该|应当|得|务必|一定要|请)?"
# after the words: what they are ("这个词", "这两个卖点"), or a count of parts they name
_ZH_WHAT = (r"(?:这个词|一词|这个关键词|等词|这几个词|(?:这|等)?(?:[两三四五六几]|\d)?个?"
               r"(?:词|关键词|"
            r"卖点|概念|短语|说法|字眼|元素))")
_ZH_PARTS_AFTER = re.compile(r"\s*(?:等|这)?[两三四五六七八九十几\d]*个?"
                             r"(?:部分|板块|章节|环节|模块|方面|栏目|段|节)")
# how often, said after the words: "出现2次以上", "，次数不少于两次"
_ZH_TIMES = (rf"(?:\s*[，,]?\s*(?:次数|出现次数|出现的次数)?\s*{_ZH_MUST}\s*(?P<q>{_ZH_Q})?\s*"
             rf"(?:出现|提到|提及|使用)?\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次"
             rf"(?P<post>以上)?)?")
_ZH_LIST_NOUN = r"(?:关键词|关键字|词语|词汇)"
# an unquoted word of a list after a colon
_ZH_ITEM = r"[\u4e00-\u9fffA-Za-z0-9]{1,12}"
_ZH_BARE_LIST = (rf"(?P<bare>{_ZH_ITEM}(?:\s*[、，,/]\s*{_ZH_ITEM}|\s*(?:和|及|与)\s*{_ZH_ITEM})"
                    r"{0,9})"
                 r"(?=\s*(?:[。；;！!（()）\n]|$))")


def _zh_words(m: re.Match[str]) -> list[str]:
    groups = m.groupdict()
    if groups.get("words"):
        return quoted_words(groups["words"])
    bare = groups.get("bare") or ""
    if re.search(r"[、，,/]", bare):
        return [w for w in re.split(r"\s*[、，,/]\s*", bare) if w]
    parts = re.split(r"\s*(?:和|及|与)\s*", bare)
    # "和" inside a word ("碳中和") is no separator: split only into words of two or more
    return parts if all(len(w) >= 2 for w in parts) else [bare]


def _zh_used(polarity: str) -> Build:
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        words = _zh_words(m)
        if polarity == "use" and (_ZH_NEGATED.search(m.string, max(0, m.start() - 4), m.start())
                                  or m.group(0)[:1].isascii() and negated_before(m)):
            return []
        if polarity == "forbid":
            return [("forbidden_word", {"word": w}) for w in words]
        if m.groupdict().get("words") and _ZH_PARTS_AFTER.match(m.string, m.end("words")):
            return []
        groups = m.groupdict()
        n = to_int(groups["n"]) if groups.get("n") else None
        qualifier = groups.get("q") or groups.get("q2") or ""
        relation = ("at least" if groups.get("post") else zh_relation_of(qualifier)) if n \
            else "at least"
        return [check for w in words for check in count("keyword", relation, n or 1, word=w)]
    return build


def _tags(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """Hashtags to use, each a keyword; none when the verb is negated."""
    if _ZH_NEGATED.search(m.string, max(0, m.start() - 4), m.start()) \
            or re.search(r"\b(?:not?|never|don['’]?t)\s+$",
                         m.string[max(0, m.start() - 12):m.start()], re.I):
        return []
    return [check for tag in re.findall(r"#[A-Za-z][\w-]*", m.group("tags"))
            for check in count("keyword", "at least", 1, word=tag)]


_ZH_PHRASINGS: tuple[Phrasing, ...] = (
    # "包含关键词“a”“b”", "文中需要提到“a”和“b”两个关键词", "'a''b'等关键词"
    Phrasing(
        rf"{_ZH_USE}(?:以下|如下)?(?:{_ZH_NOUN})[：:]?\s*(?P<words>{QUOTE_LIST})(?:\s*(?:这个词"
        rf"|一词|"
        rf"等词)?\s*(?P<q>{_ZH_Q})?\s*出现\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次)?",
        _zh_used("use"),
        kind="keyword", example="文章中必须包含关键词“环保”。",
        counter="必须包含以下关键词（碳达峰、碳中和）。"),
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s*等?(?:关键词|关键字)", _zh_used("use"),
        kind="keyword", example="适当植入'闺蜜搭配''品质生活'等关键词。",
        counter="0 times '品质生活'"),
    # a verb of using and the words: "必须包含“绿色出行”这个词", "务必提及“碳中和”，次数不少于两次"
    Phrasing(
        rf"{_ZH_USE}\s*(?P<words>{QUOTE_LIST})\s*{_ZH_WHAT}?{_ZH_TIMES}", _zh_used("use"),
        kind="keyword", example="至少提到“AI”三次。", counter="Make sure 'AI' 出现至少三次。"),
    # the words as the subject: "“春天”一词要出现2次以上", "“AI”在文中至少出现三次"
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s*(?:这个词|一词|这个关键词|等词|这几个词)?\s*{_ZH_MUST}\s*"
        rf"(?:在[^。；\n]{{0,8}}中)?\s*{_ZH_MUST}\s*(?P<q>{_ZH_Q})?\s*{_ZH_MUST}\s*出现\s*"
        rf"(?P<q2>{_ZH_Q})?\s*"
        rf"(?P<n>{ZH_NUMBER})\s*次(?P<post>以上)?", _zh_used("use"),
        kind="keyword", example="“创新”一词至少出现3次。", counter="全大写的单词至少出现3次。"),
    Phrasing(
        rf"{ZH_START}(?P<q>{_ZH_Q})\s*(?:提到|提及|使用|用到|写到|出现)\s*(?P<words>{QUOTE_LIST})"
        rf"\s*"
        rf"(?:这个词|一词)?\s*(?P<q2>{_ZH_Q})?\s*(?P<n>{ZH_NUMBER})\s*次", _zh_used("use"),
        kind="keyword", example="至少提到“AI”三次。", counter="Make sure 'AI' 出现至少三次。"),
    Phrasing(
        rf"{ZH_START}(?P<q>{_ZH_Q})?\s*(?:提到|提及|使用|用到|写到|出现)\s*(?P<q2>{_ZH_Q})?\s*"
        rf"(?P<n>{ZH_NUMBER})\s*次\s*(?P<words>{QUOTE_LIST})", _zh_used("use"),
        kind="keyword", example="文中至少使用两次“数字化”这个词。",
        counter="回答中要使用“可持续”这个词至少两次。"),
    # an unquoted list after a colon: "使用以下关键词：创新、协作、共赢", "关键词：数字化、转型"
    Phrasing(
        rf"(?:{_ZH_USE}\s*)?(?:以下|如下)?{_ZH_LIST_NOUN}\s*[：:]\s*{_ZH_BARE_LIST}",
        _zh_used("use"),
        kind="keyword", example="关键词：创新和发展", counter="文中须体现“高质量发展”这一关键词。"),
    Phrasing(
        rf"(?:{_ZH_USE}\s*)?(?:以下|如下)?{_ZH_LIST_NOUN}\s*[（(]\s*{_ZH_BARE_LIST}\s*[）)]"
        rf"(?!\s*[：:])",
        _zh_used("use"),
        kind="keyword", example="必须包含以下关键词（碳达峰、碳中和）。",
        counter="文章中必须包含关键词“环保”。"),
    # hashtags with no quotes: "带上 #summer 和 #travel 两个 hashtag"
    Phrasing(
        rf"(?<!结尾)(?<!末尾)(?<!最后)(?<!文末)(?:{_ZH_USE}|带上|\b(?:use|include|add)\b)\s*"
        rf"(?:the\s+)?"
        r"(?:hashtags?\s+)?(?P<tags>#[A-Za-z][\w-]*(?:\s*(?:和|及|、|,|，|and|&)"
        r"\s*#[A-Za-z][\w-]*)*)",
        _tags,
        kind="keyword", example="帮我写个 caption，英文，带上 #summer 和 #travel 两个 hashtag。",
        counter="帮我写个朋友圈文案 带上“周末”这个词"),
    # forbidden: "不得出现“第一”这个词", "禁止使用“最好”“第一”等词语"
    Phrasing(
        rf"{_ZH_NEGATION}(?:使用|出现|提到|提及|包含|用|写|说)(?:以下|如下|任何)?(?:{_ZH_NOUN})"
        rf"?[：:]?\s*"
        rf"(?P<words>{QUOTE_LIST})", _zh_used("forbid"),
        kind="forbidden_word", example="不要提到“价格”。", counter="文风要求温暖质朴但不失格调。"),
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s*(?:等|这个|这些)?(?:{_ZH_NOUN})?\s*(?:不得|不能|不要|不可"
        rf"|禁止|"
        r"严禁|不允许|不应)(?:出现|使用)", _zh_used("forbid"),
        kind="forbidden_word", example="“最好”“第一”等词语不得出现。",
        counter="“最好”“第一”等词语可以出现。"),
)


TABLES = (Table(_I | re.M, _ZH_PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
