"""Whether words a rule matched are asked of the response at all: not when they sit in a
question about the topic ("Why do people type in all caps?", "为什么人们用 ALL CAPS？"), in a
question about a form ("Is the five-paragraph essay format outdated?"), in a question asking
how to do the user's own task ("My essay needs 5 paragraphs, how do I structure it?", "一篇
3000字的论文要写多久？"), or when they describe a text the user wrote or gives ("I wrote a
500-word essay", "这份报告分为四个部分，请帮我检查语法错误"); package-internal, used by the
pre-pass on every match."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.phrasings.whose import LENGTH_KINDS, SENTENCE_END, clause_before

# the kinds a question about the topic names rather than asks for ("Why do people type in
# all caps?", "Is it rude to skip commas?")
TOPIC_KINDS = frozenset({"lowercase", "uppercase", "no_commas", "quoted", "postscript", "json",
                         "field_marker"})
_QUESTION = re.compile(r"\s*(?:why|what|how|when|where|who|which|whose|is|are|do|does|did)\b"
                       r"[^?\n]*\?\s*$", re.I)
# the kinds of a phrase the text opens or closes with: a given text's ("这篇英文文章的结尾是
# “See you”，帮我分析一下") is no requirement
EDGE_KINDS = frozenset({"starts_with", "ends_with"})
# a question asking about words ("Why do editors cut out the word 'very'?"); one opening with
# do, can or is may be a request ("Do you think you could write it without the word 'the'?")
_WH_QUESTION = re.compile(r"\s*(?:why|what|when|where|who|which|whose|how)\b[^?\n]*\?\s*$", re.I)
# "explain when a comma is not allowed", "请解释一下什么是全大写字母": the words right before a
# match that make it the topic
_TOPIC_BEFORE = re.compile(
    r"\b(?:when|why|whether|where|how)\s+(?:an?\s+|the\s+|to\s+(?:\w+\s+)?)?$|"
    r"(?:什么是|何谓|何为|什么叫)\s*$", re.I)


# a Chinese question about the topic: "为什么人们用 ALL CAPS？"
_ZH_QUESTION = re.compile(r"为什么|为何|是否|什么|吗\s*[？?]")
# a question about a form, not a request for one: "Is the five-paragraph essay format outdated?"
_FORM_QUESTION = re.compile(
    r"\s*(?:why|what|which|whose|is|are|was|were|does|did)\b[^?\n]*\?\s*$", re.I)
# a description of a text the user gives, with a task on it: "这份报告分为四个部分，请帮我检查语法
# 错误", "My essay has 5 paragraphs; please proofread it"
_GIVEN_TEXT = re.compile(
    r"(?:^|[。！？；\n])\s*(?:这|该|此|我的|我有一?)(?:份|篇|个|本)?[\u4e00-\u9fff]{1,6}\s*$|\b(?:this|my|the|"
    r"the\s+attached|the\s+following)\s+(?:\w+\s+)?(?:report|essay|text|article|document|draft|paper|"
    r"story|letter|email|post)\s+(?:(?:has|contains|includes|consists\s+of|is\s+divided\s+into)"
    r"\s+)?$",
    re.I)
_TASK_ON_GIVEN = re.compile(r"检查|修改|润色|校对|看看|分析|评价|改写|缩写|总结|概括|翻译|"
                            r"\b(?:check|proofread|edit|fix|review|improve|critique|grade|rewrite|"
                            r"shorten|summari[sz]e|translate)\b", re.I)


def _about_a_given_text(text: str, match: re.Match[str]) -> bool:
    """Whether a count describes a text the user gives and asks a task on."""
    return bool(_GIVEN_TEXT.search(clause_before(text, match.start()))
                and _TASK_ON_GIVEN.search(text))


def _in_a_form_question(text: str, match: re.Match[str]) -> bool:
    end = SENTENCE_END.search(text, match.end())
    sentence = clause_before(text, match.start()) + text[match.start():end.end() if end else None]
    return bool(_FORM_QUESTION.fullmatch(sentence))


def _in_a_wh_question(text: str, match: re.Match[str]) -> bool:
    end = SENTENCE_END.search(text, match.end())
    sentence = clause_before(text, match.start()) + text[match.start():end.end() if end else None]
    return bool(_WH_QUESTION.fullmatch(sentence))


def _in_a_question(text: str, match: re.Match[str]) -> bool:
    """Whether the match sits in a question about the topic: a sentence that opens with a
    question word and ends with a question mark, or words that ask when or why the thing
    holds ("explain when a comma is not allowed")."""
    if _TOPIC_BEFORE.search(text, max(0, match.start() - 20), match.start()):
        return True
    sentence_end = SENTENCE_END.search(text, match.end())
    end = sentence_end.end() if sentence_end else len(text)
    sentence = clause_before(text, match.start()) + text[match.start():end]
    return bool(_QUESTION.fullmatch(sentence)
                or _ZH_QUESTION.search(sentence) and sentence.rstrip()[-1:] in "？?")


# a question asking how to do the user's own task: "My essay needs 5 paragraphs, how do I
# structure it?", "一篇3000字的论文要写多久？"; its counts are the task's, not the response's
_ADVICE = re.compile(r"\b(?:how\s+(?:do|should|can|could|would)\s+(?:I|we)|what\s+should\s+"
                     r"(?:I|we)|how\s+(?:long|many|much))\b|怎么|如何|请问|多久|多长|多少", re.I)
_QUESTION_END = re.compile(r"[?？]|[。！!\n]|\.(?=\s|$)")


def _in_advice_question(text: str, match: re.Match[str]) -> bool:
    """Whether the match sits in a question that asks how to do the user's own task."""
    end = _QUESTION_END.search(text, match.end())
    if not end or end.group(0) not in "?？":
        return False
    return bool(_ADVICE.search(clause_before(text, match.start()) + text[match.start():end.end()]))


# a text the user has already written: "I wrote a 500-word essay; can you suggest a title?"
_USERS_OWN = re.compile(r"\bI(?:\s+(?:just|already))?\s+(?:wrote|have\s+written|['’]ve\s+written|"
                        r"drafted|finished|submitted|made|did|have|['’]ve\s+got)\s+(?:a|an|the|my|"
                        r"this)\s+$|\bmy\s+$", re.I)
# kinds whose "each" is each word, not each part: "the words 'north' and 'south' at least once
# each"
WORD_KINDS = frozenset({"keyword", "forbidden_word", "letter_frequency"})
# kinds an "each" near them never makes one part's: each word, or a marker every field keeps
# ("begin each field with its marker, [[ ## title ## ]] ...")
EACH_FREE_KINDS = WORD_KINDS | {"field_marker", "xml_tag"}


def not_asked(text: str, match: re.Match[str], kind: str, params: dict[str, Any]) -> bool:
    """Whether the check a match gives is no requirement of the response."""
    if kind in LENGTH_KINDS and _USERS_OWN.search(text, max(0, match.start() - 30),
                                                 match.start()):
        return True
    if kind in TOPIC_KINDS and _in_a_question(text, match):
        return True
    if kind in WORD_KINDS and _in_a_wh_question(text, match):
        return True
    if kind in EDGE_KINDS and _about_a_given_text(text, match):
        return True
    return "relation" in params and (_in_advice_question(text, match)
                                     or _in_a_form_question(text, match)
                                     or _about_a_given_text(text, match))
