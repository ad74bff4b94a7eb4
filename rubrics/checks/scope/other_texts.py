"""Texts other than the response a form, a word or a count may be said of: the user's own ("I
wrote a 500-word essay", "My essay has 500 words", "Our abstract is six sentences long", "a
poem I wrote entirely in lowercase"), one
the user gives ("这份报告分为四个部分，请帮我检查语法错误"), a part ("Every bullet must contain the
word 'community'", "The first line should be a hook in all caps", "the word 'mint' must appear
in the second paragraph"), or a character or thing of the story the response tells ("a town
where saying the word 'rain' is illegal", "a parrot that only squawks in ALL CAPS"). The
pre-pass asks `not_the_responses` of every match; whose a length or count of parts is, is
`scope`'s."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER
from rubrics.checks.scope.parts import (
    LENGTH_KINDS,
    PART_KINDS,
    PART_NP,
    WORD_KINDS,
    clause_before,
    said_of_a_part,
    since_clause_break,
)

# the kinds of a phrase the text opens or closes with: a given text's ("这篇英文文章的结尾是
# “See you”，帮我分析一下") is no requirement
EDGE_KINDS = frozenset({"starts_with", "ends_with"})
# a description of a text the user gives, with a task on it: "这份报告分为四个部分，请帮我检查语法
# 错误", "My essay has 5 paragraphs; please proofread it"
_GIVEN_TEXT = re.compile(
    r"(?:^|[。！？；\n])\s*(?:这|该|此|我的|我有一?)(?:份|篇|个|本)?[\u4e00-\u9fff]{1,6}\s*$|"
    r"\bhere(?:['’]s|\s+is)\s+(?:a|an|my|our|the)\s+$|\b(?:this|my|the|"
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


# a text the user must write themselves, and advice asked on how to: "I have to write a
# 1,500-word thesis chapter and I'm stuck. Can you suggest how I might structure it?"
_OWN_TASK = re.compile(r"\bI\s+(?:have\s+to|need\s+to|must|['’]ve\s+got\s+to|am\s+supposed\s+to|"
                       r"['’]m\s+supposed\s+to|am\s+writing|['’]m\s+writing)\s+(?:write\s+|submit\s+|"
                       r"hand\s+in\s+|turn\s+in\s+)?(?:a|an|the|my|this)\s+$", re.I)
_ADVICE_ASKED = re.compile(r"\bhow\s+(?:I|we)\s+(?:might|should|could|can|would|ought\s+to)\b|"
                           r"\bhow\s+(?:do|should|can|could|would)\s+(?:I|we)\b|"
                           r"\bsuggest\s+(?:how|a\s+structure|an\s+outline)\b|"
                           r"\b(?:any\s+)?(?:tips|advice|pointers)\b", re.I)


def _about_the_users_task(text: str, match: re.Match[str]) -> bool:
    """Whether a length is of a text the user must write, the response being advice on it."""
    return bool(_OWN_TASK.search(text, max(0, match.start() - 40), match.start())
                and _ADVICE_ASKED.search(text, match.end()))


# a text the user has already written: "I wrote a 500-word essay; can you suggest a title?",
# "My essay has 500 words and the limit is 450", "Our abstract is six sentences long"
_USERS_OWN = re.compile(r"\bI(?:\s+(?:just|already))?\s+(?:wrote|have\s+written|['’]ve\s+written|"
                        r"drafted|finished|submitted|made|did|have|['’]ve\s+got)\s+(?:a|an|the|my|"
                        r"this)\s+$|\bmy\s+$|\b(?:my|our)\s+(?:[\w-]+\s+){1,2}?(?:has|is|contains|"
                        r"runs|was|came\s+(?:out\s+)?to)\s+(?:(?:only|just|about|around|roughly|"
                        r"currently|already|now|nearly|almost|at\s+least|over|under|more\s+than|"
                        r"less\s+than)\s+)?$", re.I)
_FIRST_NUMBER = re.compile(rf"\d|\b(?:{EN_NUMBER})\b", re.I)


def _of_the_users_own(text: str, match: re.Match[str]) -> bool:
    """Whether a length or count describes a text the user already has, said before the match
    or inside it before its number ("Our brochure has five paragraphs")."""
    number = _FIRST_NUMBER.search(match.group(0))
    return any(_USERS_OWN.search(text, max(0, at - 30), at)
               for at in {match.start(), match.start() + (number.start() if number else 0)})


# a form the user's own text has: "Here's a poem I wrote entirely in lowercase: ..."
_WRITTEN_BY_USER = re.compile(r"\bI\s+(?:just\s+|already\s+|once\s+)?(?:wrote|typed|have\s+"
                              r"written|['’]ve\s+written|drafted|made|did)\s+(?:it\s+|this\s+)?"
                              r"(?:(?:entirely|all|completely|only|just)\s+)?$", re.I)
# forms a text of the user's may have, and a character or thing of the story the response
# tells: "a scene where a robot speaks only in capital letters"
FORM_KINDS = frozenset({"lowercase", "uppercase", "quoted", "no_commas", "postscript",
                        "capital_word_count", "starts_with", "ends_with"})
# a character or thing of the story, and a relative clause about it, before the match in its
# clause: "a story about a town where saying the word 'rain' is illegal", "a parrot that only
# squawks in ALL CAPS", "a short story in which a soldier's letter home has a P.S." (not "a
# letter in which you ask ...", a clause about the text itself)
_ABOUT_SOMEONE = (r"\b(?:about|featuring|starring)\s+(?:a|an|the|two|three|some|my|our|his|her|"
                  r"their)\s+(?:[\w'’-]+\s+){0,3}?")
# (after "where" or "in which", a new thing of the story: "a scene where a robot ...", not "a
# letter in which a P.S. asks ...", a part of the text, nor "where you ...")
_NEW_THING = (r"\b(?:where|in\s+which|wherein)\s+(?:an?|one|some|[\w-]+['’]s)\s+(?!(?:words?|"
              r"phrases?|p\.\s?(?:p\.\s?)?s|postscripts?|lines?|sentences?|paragraphs?|titles?|"
              r"headings?|quotes?|sections?)\b)")
_CHARACTER_CLAUSE = re.compile(rf"{_ABOUT_SOMEONE}(?:who|whose|where|that|which)\b|{_NEW_THING}",
                               re.I)
# ("a story about a dog that ends with ..." may be the story's ending: only who, whose, where)
_CHARACTER_CLAUSE_EDGE = re.compile(rf"{_ABOUT_SOMEONE}(?:who|whose|where)\b|{_NEW_THING}", re.I)


# a number in the words read: a count asked of the text ("a poem about the moon where the
# letter 'o' appears at least 25 times"), not a character's habit
_COUNTED = re.compile(rf"\d|\b(?:{EN_NUMBER}|once|twice|thrice)\b", re.I)


def _of_the_story(text: str, match: re.Match[str], kind: str) -> bool:
    """Whether a form or word is said of a character or thing of the story the response
    tells, not of the response: in a relative clause about it, in the match's clause, with no
    count in the words read."""
    if kind not in FORM_KINDS | WORD_KINDS or _COUNTED.search(match.group(0)):
        return False
    clause, sentence = since_clause_break(text, match.start()), clause_before(text, match.start())
    found = (_CHARACTER_CLAUSE_EDGE if kind in EDGE_KINDS else _CHARACTER_CLAUSE).search(
        min(clause, sentence, key=len) + match.group(0))
    return bool(found)
# words said to be in capitals are counted as such, not as the response's length: "more than
# one word in all capital letters"
_IN_CAPITALS = re.compile(r"\s+(?:(?:written|typed|set)\s+)?(?:in|with|using)\s+(?:all[\s-]+|"
                          r"full[\s-]+|block\s+)?(?:caps\b|capital|upper[\s-]*case)", re.I)
# kinds a part as the clause's subject keeps to itself: "The first line should be a hook in
# all caps"
PART_FORM_KINDS = frozenset({"keyword", "lowercase", "uppercase"})
# a part after a word asked for: "the word 'mint' must appear in the second paragraph"
_IN_A_PART = re.compile(r"\s+(?:in|within|inside)\s+(?P<np>(?:[\w'’-]+\s+){0,3}?[\w'’-]+)"
                        r"(?=\s*(?:[,.;:!?)]|$|\s+(?:and|but|of|to)\b))", re.I)


def not_the_responses(text: str, match: re.Match[str], kind: str, params: dict[str, Any]) -> bool:
    """Whether the check a match gives is said of a text other than the response: the user's
    own ("I wrote a 500-word essay", "a poem I wrote entirely in lowercase"), one the user gives
    ("这份报告分为四个部分，请帮我检查"), a part ("The first line should be a hook in all caps",
    "the word 'mint' must appear in the second paragraph"), or a character or thing of the story
    ("a parrot that only squawks in ALL CAPS"); or no length at all ("3 words in all caps")."""
    if kind in PART_KINDS and _of_the_users_own(text, match) \
            or kind in LENGTH_KINDS and _about_the_users_task(text, match):
        return True
    if kind in FORM_KINDS and _WRITTEN_BY_USER.search(text, max(0, match.start() - 30),
                                                      match.start()):
        return True
    if _of_the_story(text, match, kind):
        return True
    if kind == "word_count" and _IN_CAPITALS.match(text, match.end()):
        return True
    if kind in PART_FORM_KINDS and said_of_a_part(text, match):
        return True
    part = _IN_A_PART.match(text, match.end()) if kind in WORD_KINDS else None
    if part and PART_NP.fullmatch(part.group("np")):
        return True
    return (kind in EDGE_KINDS or "relation" in params) and _about_a_given_text(text, match)
