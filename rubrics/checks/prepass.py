"""The deterministic pre-pass: regexes for the common ways English and Chinese requests state
requirements code can verify ("at least 300 words", "in 3 paragraphs", "不少于800字",
"分为三个部分", "以……结尾", "all lowercase", "in JSON format"...). Each check found keeps the
request words it came from as its `quote`.

Rules the labels of `tests/data/checks/` follow too:
- "about / around / approximately / in the neighbourhood of N", "N字左右", "约N字" and a bare
  "a 500-word essay" or "写一篇800字的" are `between` floor(0.8 N) and ceil(1.2 N)
  (`numbers.TOLERANCE`), and so are "in about 6 sentences" and "roughly 10 things" of a list;
- "more than / over / exceeding / past / north of N" and "超过N字" are `at least N+1`; "less
  than / under / south of N" and "少于N字" are `at most N-1`; "no more than / within / up to
  N" and "N-word-max" are `at most N`; "two to three hundred words" is 200 to 300, "a couple
  hundred" 200;
- a length per item ("800 words each", "每段100字") is not a whole-response count: skipped;
- nor is a length or count of parts stated for one named part: on a labelled line
  ("- 标题：20字以内"), in parentheses after a part's name ("引言（300字）、主要事迹（2000字
  左右）", "- Main slogan (10-15 words)"), or in the first clause of a numbered item of a list
  of contents ("包含以下内容：1) 活动规划需包含……四大板块"); unless the label or name is the
  length, the requirements or the body, a line's label is the task or the response's language
  ("Homework: a diary entry ...", "In Turkish: ..."), or the length is said to be the total;
- nor is a length said to be for one named part ("approximately 4,000 words for the main
  analysis section", "the introduction section should be about 200 words"), unless the part
  named is the body or the whole; nor a length, count or keyword whose clause has a part as
  its subject ("the subject line should be ... no longer than 6 words", "no paragraph may
  exceed 120 words", "Every bullet must contain the word 'community'"), unless that part is
  the one text the request asks for ("Write a caption ... Keep the caption under 20 words");
  a reading inside a part's words is the part's too;
- when the request asks for several versions ("长版……短版……", "每个版本", "a long version
  and a short version"), a length in a clause naming a version is that version's: skipped;
- when the request asks for several texts ("撰写20条用户评价", "Write 5 reviews"), a length
  not said to be the total is each text's: skipped;
- "N main / key parts" is a count of sections like "N parts"; "分4-5个自然段", "in 4-5
  paragraphs" are `between` counts of paragraphs;
- N parts with introductory and concluding sections asked for besides them (in another
  sentence) leave the total unclear: no section count;
- of two lengths no text can meet together ("1000-1200字" and "中间600-700字"), the lower
  is a part's: dropped;
- a count of Chinese characters (N字) is `char_count`; a count of words is `word_count`
  (an English length asked in Chinese, "不超过八十个单词", too); a length in characters asked
  in English ("under 30 Chinese characters", "Length: 120–150 characters") is `char_count`
  when the response is to be Chinese (the unit says so, or the request asks for Chinese
  anywhere), and no length otherwise ("a tweet under 280 characters"); beside a response
  language other than Chinese ("in Japanese, under 100 characters", "用日语写……200字以内")
  there is no `char_count`, which counts Han characters only;
- "N or more", "no fewer than N" are `at least N`; "N or fewer", "N words max", "tops N",
  "word limit: N" and a negated strict bound ("don't go over N words", "must not contain more
  than N bullet points", "Under no circumstances should it go over N words") are `at most N`;
  "twice or more" is `at least 2`; number words count ("two hundred words", "two dozen", "a
  pair of"); a second bound with its unit left unsaid is the same count's ("more than 250
  words but no longer than 350"); "just shy of N" is `at most N-1`; "nothing above N words",
  "cap it at N words", "hold it to N words" and "N words, no more" are `at most N` ("no more,
  no less" is exactly);
- a count of spans to highlight or set in bold with no qualifier ("highlight 3 sections",
  "bold the key terms": 1) is `at least` that many, and so are placeholders with no number
  but an example in brackets ("leave spots like [name] for me to fill in": 1) or what is left
  to fill in said to go in brackets ("anything I still have to fill in goes in brackets": 1);
  beside a bound of the same count no number states, that floor goes ("placeholders like
  [Company] where needed, but no more than 3 of them": at most 3); "each blank ..., and
  include ten of them" counts the blanks (exactly 10), not blanks per part;
- N parts each under a heading of their own ("in 4 sections, each with a ## heading", "one
  heading per subsection, 2 subsections") are N headings, besides the parts' own count;
- sections each opened by a word and their number ("each introduced by the word ARTICLE
  followed by its number", "Begin each section with 'Act' and a number, with exactly 2
  sections", "Mark each section as 'Day 1', 'Day 2', 'Day 3'": 3, "split into Part 1, Part 2
  and Part 3": 3) are a `section_count` with that word as marker; a P.P.S. keeps the period
  it is written with ("add a P.P.S. that jokes ..."), unless that period ends the sentence;
- every [[ ## name ## ]] marker the request writes is a field marker the response keeps, bar
  a DSPy-style prompt's input fields, one asked about and one in the user's own template;
- the length of a text the request gives ("summarize this 2000-word article", "translate
  these 20 words") or of items it lists ("a list of 10 words in French") is no length;
- a form asked of one part ("end each paragraph with ...", "paragraph 2 must begin with ...",
  "the title in all caps", "keep the subject line under 8 words", "a story whose first
  sentence is under ten words", "the word 'mint' must appear in the second paragraph") or
  named as a topic (in a question about it, "explain when a comma is not allowed", "the
  structure of a 5-paragraph essay", "a game where players must avoid saying 'yes'", "an
  essay on why some companies ban the word 'problem'") is no check;
- words a verb of using names ("include the keywords a, b and c") are each a keyword, and
  forbidden words where a negation precedes the verb in its clause ("do not use the words
  ..."); a language is the response's when the response, or the verb of answering, is said
  to be in it, or the text asked for is named by it ("Write a German-language product
  description", "need a Chinese blurb"; not a topic, a translation target or an adjective:
  "in French schools", "a German translation of this note", "a French toast recipe"), or by
  the people it is for when every people and country the request names speaks that one
  language ("for my Brazilian readers, in their language", "she only understands Hindi, so
  write it in her language"; not "Swiss readers"), or after a language refused ("no English
  please, Polish"); where no rule reads a language, one named in a clause that governs the
  response is read by name ("some tips on sleeping better in Greek?", "Swahili, if you can.",
  "my grandmother speaks only Tamil, write her a note"), bar a translation target, a topic, a
  noun it qualifies, a question about words, a quote, a negation, one part, a list of
  languages, the user's or a character's text; two so read give none. So is a case named for
  the whole response where no rule reads one ("make the announcement capital letters", "not
  one capital anywhere"), bar a count of words, one part, a contrast or topic and all caps
  refused ("Don't write it in all caps": no check);
- the whole reply as JSON however it is said ("Respond with a JSON object", "Machine-readable
  JSON only", "Output: JSON") is `json`; JSON as a topic, given, allowed inside prose or the
  output of code the request asks for ("Write a script ... Output: JSON") is none;
- a number of list items is a count when the list's style is named ("an ordered list of five
  steps", "用项目符号列出三点"), not when it is not ("give me 10 name ideas"); a range of
  them ("3-5 bullet points") is `between`;
- one form per requirement: an "at least N" and an "at most M" of one count kind (the same
  word, letter, divider or marker) are one `between N and M`; a JSON Schema given makes
  `json_schema` alone (the schema asks for JSON itself);
- a form the request only permits ("feel free to use JSON", "add a P.S. if you think it
  fits") and a P.S. that opens a paragraph of the request (the user's own) are no check;
- nor is a form, word or phrase said of a character or thing of the story ("a parrot that
  only squawks in ALL CAPS", "a town where saying the word 'rain' is illegal"), of a text the
  user already has ("a poem I wrote entirely in lowercase", "My toast already ends with ...",
  "My essay has 500 words"), nor a count of a part the response opens or ends with ("end with
  a one-sentence summary"); a negated strict bound on a word ("don't use 'orange' more than
  twice") is `keyword` at most 2, and "a dozen sentences or so" is about 12;
- a count in a question about a form or about how to do the user's own task ("Is the
  five-paragraph essay outdated?", "my essay needs 5 paragraphs, how do I structure it?"; not
  one said before the colon that introduces it: "keep it under 100 words: how do I ...?"),
  or describing a text the user wrote or gives ("I wrote a 500-word essay", "Our abstract is
  six sentences long", "这份报告分为四个部分，请帮我检查"), is no check; nor is a JSON Schema
  the request asks about ("Explain what this JSON Schema accepts", "Why does this object fail
  validation?").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from rubrics.checks.base import ParamsInvalid
from rubrics.checks.model import Check
from rubrics.checks.numbers import EN_NUMBER
from rubrics.checks.phrasings import NAMED, PART_OF, RULES
from rubrics.checks.phrasings.formats import json_schemas
from rubrics.checks.phrasings.parts import divider
from rubrics.checks.phrasings.shared import Build, Matcher, bounded_after, negated_bound
from rubrics.checks.scope.other_texts import not_the_responses
from rubrics.checks.scope.parts import (
    EACH_FREE_KINDS,
    INTRO_OUTRO,
    LENGTH_KINDS,
    SENTENCE_END,
    WORD_KINDS,
    asks_for_several,
    clause_before,
    of_a_part,
    per_item,
    since_clause_break,
)

# --- whether the words ask anything of the response at all: not in a question about the
# topic, a form or the user's own task, nor a permission (whose a reading is: `scope`)

# the kinds a question about the topic names rather than asks for ("Why do people type in
# all caps?", "Is it rude to skip commas?")
TOPIC_KINDS = frozenset({"lowercase", "uppercase", "no_commas", "quoted", "postscript", "json",
                         "field_marker"})
_QUESTION = re.compile(r"\s*(?:why|what|how|when|where|who|which|whose|is|are|do|does|did)\b"
                       r"[^?\n]*\?\s*$", re.I)
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
# a question asking how to do the user's own task: "My essay needs 5 paragraphs, how do I
# structure it?", "一篇3000字的论文要写多久？"; its counts are the task's, not the response's
_ADVICE = re.compile(r"\b(?:how\s+(?:do|should|can|could|would)\s+(?:I|we)|what\s+should\s+"
                     r"(?:I|we)|how\s+(?:long|many|much))\b|怎么|如何|请问|多久|多长|多少", re.I)
# (a colon too: in "keep it under 100 words: how do I fix a flat?" the count precedes the
# question it introduces, it is not in it)
_QUESTION_END = re.compile(r"[?？]|[。！!\n]|\.(?=\s|$)|[:：](?=\s)")
# a form permitted, not asked: "Feel free to add a P.S. if you think it fits", "If it's
# easier, feel free to use JSON"
_PERMITTED_BEFORE = re.compile(r"\b(?:feel\s+free\s+to|optionally)\b", re.I)
_PERMITTED_AFTER = re.compile(
    r"[^.;!?\n]{0,30}?\bif\s+you\s+(?:like|want|wish|prefer|think|feel)\b", re.I)


def _sentence(text: str, match: re.Match[str]) -> str:
    """The match's sentence, from its start to its end mark."""
    end = SENTENCE_END.search(text, match.end())
    return clause_before(text, match.start()) + text[match.start():end.end() if end else None]


def _in_a_question(text: str, match: re.Match[str]) -> bool:
    """Whether the match sits in a question about the topic: a sentence that opens with a
    question word and ends with a question mark, or words that ask when or why the thing
    holds ("explain when a comma is not allowed")."""
    if _TOPIC_BEFORE.search(text, max(0, match.start() - 20), match.start()):
        return True
    sentence = _sentence(text, match)
    return bool(_QUESTION.fullmatch(sentence)
                or _ZH_QUESTION.search(sentence) and sentence.rstrip()[-1:] in "？?")


def _in_advice_question(text: str, match: re.Match[str]) -> bool:
    """Whether the match sits in a question that asks how to do the user's own task."""
    end = _QUESTION_END.search(text, match.end())
    if not end or end.group(0) not in "?？":
        return False
    return bool(_ADVICE.search(clause_before(text, match.start()) + text[match.start():end.end()]))


def _not_asked(text: str, match: re.Match[str], kind: str, params: dict[str, Any]) -> bool:
    """Whether the check a match gives is no requirement of the response: permitted rather
    than asked, in a question about the topic, a form or the user's own task, or said of a
    text other than the response (`other_texts.not_the_responses`)."""
    if _PERMITTED_BEFORE.search(since_clause_break(text, match.start())) \
            or _PERMITTED_AFTER.match(text, match.end()) \
            or not_the_responses(text, match, kind, params):
        return True
    if kind in TOPIC_KINDS and _in_a_question(text, match) \
            or kind in WORD_KINDS and _WH_QUESTION.fullmatch(_sentence(text, match)):
        return True
    return "relation" in params and bool(_in_advice_question(text, match)
                                         or _FORM_QUESTION.fullmatch(_sentence(text, match)))

def _found(text: str, rules: tuple[tuple[Matcher, Build], ...] = RULES
           ) -> Iterator[tuple[int, Check]]:
    """Every rule's readings the response is asked for, with where each starts. A reading
    inside words read as one part's is that part's too: "keep the headline to no more than 10
    words" is the headline's, and so is the bare "10 words" inside it."""
    several = asks_for_several(text)
    asked: list[tuple[re.Match[str], str, dict[str, Any]]] = []
    parts: list[tuple[str, int, int]] = []
    for pattern, build in rules:
        for match in pattern.finditer(text):
            each = per_item(text, match)
            for kind, params in build(match):
                if each and kind not in EACH_FREE_KINDS:
                    continue
                params = negated_bound(text, match, bounded_after(text, match, params))
                if of_a_part(text, match, kind, several):
                    parts.append((kind, *match.span()))
                elif not _not_asked(text, match, kind, params):
                    asked.append((match, kind, params))
    for match, kind, params in asked:
        if any(kind == of and start <= match.start() and match.end() <= end
               for of, start, end in parts):
            continue
        try:
            yield match.start(), Check(kind=kind, params=params, source="prepass",
                                       quote=" ".join(match.group(0).split())[:QUOTE_CHARS])
        except (ParamsInvalid, ValueError):
            continue


QUOTE_CHARS = 400


def _is_count(check: Check) -> bool:
    return "relation" in check.params


def _counted(check: Check) -> dict[str, Any]:
    """A count's params besides its bound: what is counted (the word, letter, divider...)."""
    return {k: v for k, v in check.params.items() if k not in ("relation", "n", "upper")}


def _shares_a_number(one: Check, other: Check) -> bool:
    """Whether two counts state a number in common: the same number read twice (the "3
    words" of "at least 3 key words in bold"), not two requirements side by side ("字数800字
    左右，分成三个部分")."""
    return bool(_stated(one) & _stated(other))


def _stated(check: Check) -> set[int]:
    """The numbers a count may have been read from: its bounds, and the number before "more
    than" (n - 1), "less than" (n + 1) or "about" (the centre of its range)."""
    n, upper = check.params["n"], check.params["upper"]
    found = {n, n - 1, n + 1}
    if upper is not None:
        found |= {upper, round(upper / 1.2), round(n / 0.8)}
    return found


def _without_misreadings(checks: list[Check]) -> list[Check]:
    """The checks less those read from words a longer check of a kind `PART_OF` names reads
    otherwise (an all-capitals response inside a count of capitalised words)."""
    return [c for c in checks if not any(
        other.kind in PART_OF.get(c.kind, ()) and c.quote in other.quote
        and c.quote != other.quote for other in checks)]


def _span(check: Check) -> tuple[int, float]:
    """The counts a count check allows, as (lowest, highest)."""
    relation, n, upper = check.params["relation"], check.params["n"], check.params["upper"]
    return {"at least": (n, float("inf")), "at most": (0, n), "exactly": (n, n),
            "between": (n, upper if upper is not None else n)}[relation]


def _whole_lengths(checks: list[Check]) -> list[Check]:
    """One response has one length: of two lengths of one kind that no text can meet
    together, the one wholly below the other's floor is a part's ("全文1000-1200字……中间
    600-700字", the middle part's), not the response's: dropped."""
    return [c for c in checks if not (c.kind in LENGTH_KINDS and any(
        other.kind == c.kind and _span(other)[0] > _span(c)[1] for other in checks))]


def _han_lengths(checks: list[Check]) -> list[Check]:
    """A `char_count` counts Han characters: beside a response language other than Chinese
    ("用日语写……200字以内": Japanese, whose kana it skips; English, whose letters it does not
    see) it cannot be verified: dropped."""
    other = any(c.kind == "language" and c.params["language"] != "zh" for c in checks)
    return [c for c in checks if not (other and c.kind == "char_count")]


# JSON named as a topic: "explain JSON simply", "what is JSON?"
_JSON_TOPIC = re.compile(r"\b(?:explain|define|describe|teach\s+me(?:\s+about)?|learn\s+about|"
                         r"what\s+(?:is|are)|what's)\s+(?:what\s+)?(?:an?\s+)?json\b|"
                         r"\bwhat\s+json\s+(?:is|means)\b", re.I)


def _canonical(request: str, checks: list[Check]) -> list[Check]:
    """One form per requirement: a `json` check goes when a `json_schema` one is found (the
    schema asks for JSON itself) or when JSON is the request's topic; an "at least N" and an
    "at most M" (N <= M) of one count kind with the same other params merge into one
    "between N and M", quoting the request's words from the first to the second; an "at least
    1" another count of the same thing already asks for goes first (`_implied`)."""
    if any(c.kind == "json_schema" for c in checks) or _JSON_TOPIC.search(request):
        checks = [c for c in checks if c.kind != "json"]
    checks = [c for c in checks if not _implied(c, checks)]
    groups: dict[tuple[str, str], list[Check]] = {}
    for check in checks:
        if _is_count(check) and check.params["relation"] in ("at least", "at most"):
            groups.setdefault((check.kind, json.dumps(_counted(check), sort_keys=True)),
                              []).append(check)
    merged: dict[int, Check | None] = {}
    for group in groups.values():
        floors = [c for c in group if c.params["relation"] == "at least"]
        ceilings = [c for c in group if c.params["relation"] == "at most"]
        if len(floors) != 1 or len(ceilings) != 1 \
                or floors[0].params["n"] > ceilings[0].params["n"]:
            continue
        low, high = floors[0], ceilings[0]
        first, second = (low, high) if checks.index(low) < checks.index(high) else (high, low)
        merged[id(first)] = first.model_copy(update={
            "params": {**low.params, "relation": "between", "upper": high.params["n"]},
            "quote": _quote_between(request, first.quote, second.quote)})
        merged[id(second)] = None
    return [c for c in (merged.get(id(c), c) for c in checks) if c is not None]


# a number in a check's quote: an "at least 1" read from words without one is a floor no
# number states ("use placeholders like [name]", "bold the key terms")
_A_NUMBER = re.compile(rf"\d|\b(?:{EN_NUMBER}|once)\b|[一二两三四五六七八九十百千]", re.I)


def _implied(check: Check, checks: list[Check]) -> bool:
    """An "at least 1" that another count of the same thing already asks for: a highlight or a
    word asked for with no count beside a floor ("bold the key terms, at least three"), or
    beside any bound when no number states it ("placeholders like [Company] where needed, but
    no more than 3 of them": at most 3, not between 1 and 3)."""
    if not _is_count(check) or check.params["relation"] != "at least" or check.params["n"] != 1:
        return False
    unnumbered = not _A_NUMBER.search(check.quote)
    return any(other is not check and other.kind == check.kind and other.params["n"] >= 1
               and (unnumbered or other.params["relation"] != "at most")
               and _counted(other) == _counted(check) for other in checks)


def _quote_between(request: str, first: str, second: str) -> str:
    """The request's words from `first` to the end of `second` (whitespace collapsed), or
    `first` alone when they are too far apart to quote."""
    text = " ".join(request.split())
    start = text.find(first)
    found = text.find(second, start) if start >= 0 else -1
    end = max(start + len(first), found + len(second))
    if start < 0 or found < 0 or end - start > QUOTE_CHARS:
        return first
    return text[start:end]


def _overlapping_count(at: int, check: Check, start: int, other: Check) -> bool:
    """Whether a count of one kind starts inside the words an earlier count of that kind with
    the same number was read from, as "exactly" where the first states a relation: one
    requirement read twice ("at least 10 sentences long": "at least 10 sentences", then "10
    sentences long"); the first, with its relation, stands."""
    return (check.kind == other.kind and _is_count(check) and start < at
            < start + len(other.quote) and check.params["relation"] == "exactly"
            and other.params["relation"] != "exactly" and check.params["n"] == other.params["n"]
            and _counted(check) == _counted(other))


def _beside_intro_outro(request: str, at: int) -> bool:
    """Whether another sentence than the one stating N parts at `at` asks for introductory or
    concluding sections: on top of the N, they leave the response's total unclear."""
    starts = [m.end() for m in SENTENCE_END.finditer(request, 0, at)]
    end = SENTENCE_END.search(request, at)
    sentence = range(starts[-1] if starts else 0, end.end() if end else len(request))
    return any(m.start() not in sentence for m in INTRO_OUTRO.finditer(request))


def prepass(request: str) -> tuple[Check, ...]:
    """The checks the request's own words state, first occurrence of each requirement kept,
    in the order they appear. A match inside a longer one of the same kind, or of any count
    kind inside a longer count (the "800字" in "不少于800字", the "2 sections" in "highlight
    at least 2 sections"), is dropped."""
    # at one start, the longer reading first, so the shorter one inside it is the one dropped
    schemas = [(at, Check(kind="json_schema", params={"schema": schema}, quote=quote,
                          source="prepass")) for at, quote, schema in json_schemas(request)]
    found = [*_found(request), *schemas]
    read = {check.kind for _, check in found}
    for kinds, module in NAMED:  # read by name where the enumerated rules read none
        if not read & kinds:
            found.extend(_found(request, module.RULES))
    found.sort(key=lambda pair: (pair[0], -len(pair[1].quote)))
    kept: dict[tuple[str, str], Check] = {}
    spans: list[tuple[int, Check]] = []
    for at, check in found:
        if check.key() in kept:
            continue
        if any(check.quote in other.quote and check.quote != other.quote
               and (check.kind == other.kind or _is_count(check) and _is_count(other)
                    and _shares_a_number(check, other))
               or _overlapping_count(at, check, start, other)
               for start, other in spans):
            continue
        if check.kind == "section_count" and not check.params["marker"] \
                and _beside_intro_outro(request, at):
            continue
        kept[check.key()] = check
        spans.append((at, check))
    mark = divider(request)
    checks = [c for c in kept.values()]
    if mark:
        checks = [c.model_copy(update={"params": {**c.params, "divider": mark}})
                  if c.kind == "paragraph_count" else c for c in checks]
    checks = _canonical(request, _han_lengths(_whole_lengths(_without_misreadings(checks))))
    marked = {(c.params["relation"], c.params["n"]) for c in checks
              if c.kind == "section_count" and c.params["marker"]}
    return tuple(c for c in checks if not (
        c.kind == "section_count" and not c.params["marker"]
        and (c.params["relation"], c.params["n"]) in marked))
