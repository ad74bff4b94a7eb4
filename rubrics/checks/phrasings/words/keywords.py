"""The ways an English request names words its response must or must not use (the Chinese
and mixed ones are `keywords_zh`'s): a verb of using and its words ("include the keywords a, b
and c", "mention 'X' at least 3 times", "a toast that mentions 'fishing' at least once", "work
the word 'X' into the story"), whose polarity a negation before the verb turns ("do not use
the words bark, woof, or puppy", "you are not allowed to use ...", "without using the word
..."), unless it turns a strict bound ("don't use 'orange' more than twice": at most 2); verbs
that forbid by themselves ("avoid the words ...", "exclude ...", "no use of the word ..."); the
word as a subject ("the word galaxy should appear at least 4 times", "the words 'x' and 'y'
must not appear"); labelled lists ("Keywords: ...", "Banned words: ...").

Words are quoted, or bare after a noun that names them ("the words happy or sad"), each a
keyword or forbidden word of its own. A word the request asks about ("write about the word
'never'", "what does 'X' mean", "an essay on why some companies ban the word 'problem'"),
quoted as an example, or that a character must avoid ("a game where players must avoid
saying 'yes'") is no keyword; nor is a word asked of each part ("Every bullet must contain
the word 'community'": `rubrics.checks.scope.other_texts`)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, to_int
from rubrics.checks.phrasings.shared import (
    QUALIFIER_EN,
    QUOTE_ITEM,
    QUOTE_LIST,
    TIMES_EN,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    quoted_words,
    relation_of,
    rules_of,
    times,
    times_relation,
)

_I = re.I | re.S
# words that end a bare list or cannot be a bare word: "the words happy or sad in the response",
# "dont use the words blue or waves ok"
_STOP = (r"(?:and|or|nor|in|into|to|at|on|of|for|from|with|within|throughout|anywhere|when|"
         r"while|as|the|a|an|your|my|this|that|these|those|response|answer|reply|text|times?|once|"
         r"twice|thrice|least|most|more|less|fewer|than|please|so|because|since|if|but|then|also|"
         r"again|even|any|all|each|every|exactly|no|not|is|are|be|should|must|will|can|may|"
         r"appear|appears|used|whatsoever|either|neither|only|etc|you|i|we|they|he|she|it|them|"
         r"us|me|their|our|his|her|its|which|who|whose|following|like|such|about|more|ok|okay|pls|"
         r"plz|thanks|thx|lol)")
_BARE_WORD = rf"(?!{_STOP}\b)[A-Za-z0-9][\w'’-]*"
_BARE_ITEM = rf"{_BARE_WORD}(?:\s+{_BARE_WORD})?"
# after a bare list: the end of the sentence or a word that cannot belong to the list
_BARE_END = (r"(?=\s*(?:[.,;:!?)\n。，；！？）]|$)|\s+(?:in|into|to|at|anywhere|throughout|within|"
             rf"when|while|please|so|because|from|more|less|fewer|exactly|{EN_NUMBER}\b"
             rf"|{QUALIFIER_EN}|"
             r"once|twice|thrice|should|must|may|can|will|is|are|appears?|occurs?|shows?|be|"
             r"anymore|at\s+all|whatsoever|ever|ok|okay|pls|plz|thanks|thx|lol)\b)")
_BARE_LIST = (rf"{_BARE_ITEM}(?:(?:\s*,\s*(?:and\s+|or\s+|nor\s+)?|\s+(?:and|or|nor)\s+)"
              rf"{_BARE_ITEM}){{0,9}}{_BARE_END}")
_BARE_ONE = rf"{_BARE_WORD}{_BARE_END}"
_NOUN = (r"(?:(?:vocabulary|spelling|target|bonus|required|given|listed)\s+)?(?:key\s*)?(?:words?|"
         r"terms?|phrases?|keywords?|expressions?|slogan|tagline|catchphrase|motto|hashtags?)\b")
_USE = (r"(?:use|using|uses|include|including|includes|mention|mentioning|mentions|say|saying|"
        r"write|writing|repeat|incorporate|incorporating|contain|containing|contains|feature|"
        r"featuring|work|weave|slip|fit|insert|add|put|employ|utili[sz]e|integrate|have|has|"
        r"state|drop|get|bring|sprinkle|name|reference|cite|(?:throw|toss|sneak|slip|drop|"
        r"work|fit)\s+in)")
# a negation before the verb, in the same clause: "do not", "you are not allowed to", "never"
_NEGATED = re.compile(
    r"\b(?:not(?!\s+(?:only|just|forget))|never(?!\s+forget)|no(?!\s+(?:more|less|fewer|longer|"
    r"later|matter|sooner))|without|cannot|avoid(?:ing)?|refrain(?:ing)?\s+from|forbidden\s+to|"
    r"prohibited\s+from|banned\s+from|instead\s+of)\b[^.;!?\n]{0,40}$"
    r"|(?:n['’]t|\b(?:dont|doesnt|cant|wont|shouldnt|mustnt|didnt))(?!\s+forget)\s+"
    r"(?:\w+\s+){0,4}$",
    re.I)
_CLAUSE_CUT = re.compile(r"[.;!?\n]|\b(?:and|but|then|also|while|so)\b(?!\s+(?:not|never))",
                         re.I)
# someone other than the writer who must use or avoid the word: "players must avoid saying"
_SOMEONE_ELSE = re.compile(
    r"\b(?:players?|characters?|people|someone|somebody|everyone|nobody|kids|children|"
    r"students|users|customers|he|she|they|the\s+(?:hero|villain|narrator|character|player|"
    r"speaker|protagonist))\b[^.;!?\n]*$", re.I)


# a clause the verb sits in that is the topic: "an essay on why some companies ban the word
# 'problem'", "explain how to avoid the word 'very'" (not "... how to bake bread that uses")
_TOPIC_CLAUSE = re.compile(r"\b(?:why|how|whether)\s+(?:(?!(?:that|which|who)\b)[\w'’-]+\s+)"
                           r"{1,4}$", re.I)
# what opens a use of words said of the response itself, whatever clause it sits in: "without
# using the word", "avoiding the word"
_OWN_VERB = re.compile(r"(?:without|no|not|never|[a-z]+ing)\b", re.I)


def _clause_before(m: re.Match[str]) -> str:
    """The words of the match's clause before it: from the last sentence end or conjunction."""
    before = m.string[max(0, m.start() - 80):m.start()]
    cuts = list(_CLAUSE_CUT.finditer(before))
    return before[cuts[-1].end():] if cuts else before


def negated_before(m: re.Match[str]) -> bool:
    """Whether a negation precedes the match's verb in its clause ("must not mention ...")."""
    return bool(_NEGATED.search(_clause_before(m)))


def _words_of(m: re.Match[str]) -> list[str]:
    groups = m.groupdict()
    if groups.get("words"):
        return quoted_words(groups["words"])
    bare = groups.get("bare") or ""
    return [w.strip() for w in re.split(r"\s*,\s*(?:and\s+|or\s+|nor\s+)?|\s+(?:and|or|nor)\s+",
                                        bare) if w.strip()]


# a strict bound a negation turns: "don't use it more than twice" is at most 2
_TURNED = {"more than": "at most", "less than": "at least"}


def _used(polarity: str) -> Build:
    """Each word must appear (as often as the request says, once if it says nothing), or must
    not; a negation before the verb turns "use" into "must not use"."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        clause = _clause_before(m)
        if _SOMEONE_ELSE.search(clause) \
                or _TOPIC_CLAUSE.search(clause) and not _OWN_VERB.match(m.group(0)):
            return []
        negated = polarity == "forbid" or polarity == "use" and bool(_NEGATED.search(clause)) \
            or bool(m.groupdict().get("neg"))
        words = _words_of(m)
        n = times(m) if "t" in m.groupdict() else None
        relation = times_relation(m) if n is not None else "at least"
        if negated and n is not None and relation in _TURNED:
            # "don't use 'orange' more than twice": a bound, not a ban
            return [check for w in words for check in count("keyword", _TURNED[relation], n,
                                                              word=w)]
        if negated:
            return [("forbidden_word", {"word": w}) for w in words]
        return [check for w in words for check in count("keyword", relation, n or 1, word=w)]
    return build


def _instances(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """"at least 3 instances of the word X": the count comes before the word."""
    qualifier = m.group("q") or ""
    relation = times_relation(m) if qualifier else "exactly"
    return [check for w in _words_of(m)
            for check in count("keyword", relation, to_int(m.group("n")), word=w)]


def _not_over(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A negated bound on how often a word appears: "'x' doesn't appear more than twice" is at
    most 2, "not fewer than 3 times" at least 3."""
    relation = {"more than": "at most", "less than": "at least"}.get(times_relation(m))
    n = times(m)
    return [check for w in _words_of(m) for check in count("keyword", relation, n, word=w)] \
        if relation else []


def _second(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A word and its count after a first one's in the same sentence ("'cinnamon' appears at
    least once and 'nutmeg' at least twice"): a keyword when the first was one."""
    if not _FIRST_COUNTED.search(m.string, max(0, m.start() - 60), m.start()):
        return []
    return _used("use")(m)


def _second_bound(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    if _NEGATED.search(_clause_before(m)):
        return []
    return [check for w in _words_of(m) for check in count(
        "keyword", relation_of(m.group("q2")), to_int(m.group("n2")), word=w)]


# (after the particle of "work the word 'X' in at least twice" too)
_TIMES = rf"(?:\s*,?\s+(?:in\s+(?:your|the)\s+\w+\s+|in\s+)?{TIMES_EN})?"
_APPEAR = (r"(?:appear(?:s|ing)?|occurs?|shows?\s+up|(?:be|is|are)\s+(?:used|included|mentioned|"
           r"present|repeated)|"
           r"features?|comes?\s+up|crops?\s+up|pops?\s+up|turns?\s+up|(?:be|is|are)\s+in\s+"
           r"(?:there|it|(?:your|the)\s+\w+))")
_MODAL = r"(?:should|must|needs?\s+to|has\s+to|have\s+to|is\s+to|ought\s+to|will|shall|to|can|may)"
# a bare word after "the" names a thing, not a word, when it is one of these
_SOME = r"(?:same|other|different|following|word|words|phrase|term|name|letter|one)\b"
# "should both show up", "all need to appear"
_ALL = r"(?:(?:both|all|each|also)\s+)?"

# the first word of two and its count: "'cinnamon' appears at least once"
_FIRST_COUNTED = re.compile(
    rf"(?:{_APPEAR}|\b(?:use|mention|include|say|repeat)\b[^.;!?\n]{{1,40}}?)\s+{TIMES_EN}\s*$",
    re.I)

_PHRASINGS: tuple[Phrasing, ...] = (
    # a verb of using and its words: "include the keywords a, b and c", "use the word love
    # fewer than 3 times", "mention 'blockchain' at least 3 times", "don't say 'awesome'"
    Phrasing(
        rf"\b{_USE}(?:\s+in)?\s+(?:(?:each|all|both|any)\s+of\s+)?(?:the\s+|these\s+|those\s+"
        rf"|this\s+|"
        rf"following\s+)*(?:following\s+)?{_NOUN}\s*:?\s*[\[(]?\s*(?P<words>{QUOTE_LIST})"
        rf"{_TIMES}", _used("use"),
        kind="keyword", example='use the word "blue"', counter="Never use the word 'basically'."),
    Phrasing(
        rf"\b{_USE}(?:\s+in)?\s+(?:the\s+|these\s+|following\s+)*{_NOUN}\s*:?\s*\(?\s*"
        rf"(?P<bare>{_BARE_LIST})"
        rf"(?:\s+in\s+(?:your|the)\s+(?:entire\s+)?\w+)?{_TIMES}", _used("use"),
        kind="forbidden_word", example="Avoid using the words fun and easy.",
        counter="avoid the words 'very' and 'really'."),
    Phrasing(
        rf"\b{_USE}\s+(?:each|all|every\s+one|both)\s+of\s+(?:these|the\s+following)\s+{_NOUN}\s*"
        rf"(?:{TIMES_EN}\s*)?:\s*(?:(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_LIST}))",
        _used("use"),
        kind="keyword", example="Use each of these words at least once: ocean, drift, salt.",
        counter="Include the words 'north' and 'south' at least once each."),
    Phrasing(
        rf"\b(?:use|using|uses|mention|mentioning|mentions|include|including|includes|repeat|"
        rf"repeating|repeats|say|saying|says|write|writes|feature|featuring|features|name|names)\s+"
        rf"(?P<words>{QUOTE_LIST})\s*,?"
        rf"\s+{TIMES_EN}", _used("use"),
        kind="keyword", example="Use 'momentum' 4+ times.", counter="Use 4 sections."),
    Phrasing(
        rf"\b(?:use|using|mention|mentioning|say|saying|repeat|repeating)\s+(?:the\s+(?!{_SOME}))?"
        rf"(?P<bare>{_BARE_ITEM})\s+(?:like\s+)?{TIMES_EN}", _used("use"),
        kind="keyword", example="Mention Berlin 3+ times.",
        counter="Mention 'quantum' no fewer than 3 times."),
    Phrasing(
        rf"\b(?:use|mention|include|say|write|name|reference|cite|feature|incorporate|drop|"
        rf"(?:work|weave|slip|throw)\s+in)\s+(?P<words>{QUOTE_LIST})\s+(?:somewhere\s+)?"
        r"(?:in|into|throughout|within)\s+(?:your|the)\s+(?:entire\s+|whole\s+)?(?:response|"
        r"answer|reply|text|story|poem|essay|post|email|letter|piece)\b", _used("use"),
        kind="keyword", example="Reference 'Agile' in your answer.", counter="answer in French"),
    Phrasing(
        rf"(?P<neg>\b(?:do\s+not|don['’]?t|never|(?:must|should|may|can|will|shall)\s*(?:not"
        rf"|never)|"
        rf"mustn['’]?t|shouldn['’]?t|cannot|can['’]?t|won['’]?t|please\s+don['’]?t))\s+(?:ever\s+)?"
        rf"(?:use|say|write|mention|include|contain|feature|have)\s+(?:the\s+{_NOUN}\s*)?"
        rf"(?P<words>{QUOTE_LIST})(?!\s*,?\s+(?:more|less|fewer)\s+than\b)", _used("use"),
        kind="forbidden_word", example='Do not use the word "car".', counter='use the word "blue"'),
    # keeping words out: "keep the word 'guarantee' out of it", "without the word 'very'",
    # "don't let the word 'basically' appear"
    Phrasing(
        rf"\b(?:keep|leave)\s+(?:the\s+{_NOUN}\s*)?(?P<words>{QUOTE_LIST})\s+out\b",
        _used("forbid"),
        kind="forbidden_word", example="Keep 'honestly' out of the reply.",
        counter='The very first words of your reply must be "Honestly".'),
    Phrasing(
        rf"\bwithout\s+(?:any\s+)?(?:the\s+)?{_NOUN}\s*(?P<words>{QUOTE_LIST})", _used("forbid"),
        kind="forbidden_word", example='without the word "river"',
        counter='using the word "river"'),
    Phrasing(
        rf"\bwithout\s+(?:ever\s+)?(?:writing|using|saying|mentioning|including)\s+"
        rf"(?:the\s+{_NOUN}\s*)?"
        rf"(?P<words>{QUOTE_LIST})", _used("forbid"),
        kind="forbidden_word", example='Without ever writing "river",',
        counter='without the word "river"'),
    Phrasing(
        rf"\b(?:do\s+not|don['’]?t|never)\s+let\s+(?:the\s+{_NOUN}\s*)?(?P<words>{QUOTE_LIST})\s+"
        r"(?:appear|show\s+up|slip\s+in|sneak\s+in|in)\b", _used("forbid"),
        kind="forbidden_word", example="Don't let the word 'basically' slip in.",
        counter="Please don’t use the word 'honestly'."),
    Phrasing(
        rf"\bno\s+(?:using|saying|mentioning|writing|(?:use|mention)\s+of)\s+"
        rf"(?:(?:the\s+)?{_NOUN}\s+)?"
        rf"(?P<words>{QUOTE_LIST})", _used("forbid"),
        kind="forbidden_word", example="No using 'basically' or 'literally'.",
        counter="No using slang."),
    # verbs that forbid by themselves: "avoid the words 'very' and 'really'", "exclude ..."
    Phrasing(
        rf"\b(?:avoid(?:ing)?|exclude|excluding|omit|omitting|ban|skip|steer\s+clear\s+of|"
        rf"refrain\s+from|stay\s+away\s+from|leave\s+out|cut\s+out|keep\s+out|eliminate|"
        rf"do\s+without|stay\s+clear\s+of)\s+(?:(?:using|saying|mentioning|writing|including|"
        rf"the\s+use\s+of)\s+)?(?:(?:the|any|these|all)\s+(?:of\s+the\s+)?)?(?:{_NOUN}\s*:?\s*"
        r"(?:(?:like|such\s+as)\s+)?)?"
        rf"(?P<words>{QUOTE_LIST})", _used("forbid"),
        kind="forbidden_word", example="Avoid saying 'just'.", counter="Avoid jargon."),
    Phrasing(
        rf"\b(?:avoid(?:ing)?|exclude|excluding|omit|omitting|ban)\s+(?:(?:using|saying|mentioning|"
        rf"writing)\s+)?(?:(?:the|any|these)\s+)?{_NOUN}\s*:?\s*(?P<bare>{_BARE_LIST})",
        _used("forbid"),
        kind="forbidden_word", example="Avoid using the words fun and easy.",
        counter="avoid the words 'very' and 'really'."),
    # the word as a subject: "the word galaxy should appear at least 4 times", "the words 'x'
    # and 'y' must not appear", "'x' is banned"
    Phrasing(
        rf"\b(?:the\s+)?{_NOUN}\s+(?:(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_ONE}))\s+"
        rf"(?:{_MODAL}\s+)?"
        rf"(?:only\s+)?{_APPEAR}\s+(?:in\s+(?:your|the)\s+\w+\s+)?{TIMES_EN}", _used("use"),
        kind="keyword", example="The word galaxy should appear at least 4 times.",
        counter="The letter 'k' should be used at least 4 times."),
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s+(?:{_MODAL}\s+)?(?:only\s+)?{_APPEAR}\s+(?:in\s+(?:your|the)"
        rf"\s+"
        rf"\w+\s+)?{TIMES_EN}", _used("use"),
        kind="keyword", example="'name' appears 2 times", counter="2 commas"),
    # with no count: "the words 'harbor' and 'lantern' should both show up", "the keywords AI
    # and ethics are present"
    Phrasing(
        rf"\b(?:the\s+)?{_NOUN}\s+(?:(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_LIST}))\s+{_ALL}"
        rf"(?:{_MODAL}\s+)?{_ALL}(?:only\s+)?{_APPEAR}\b", _used("use"),
        kind="keyword", example='The word "river" must appear in your reply.',
        counter='The word "river" must not appear anywhere.'),
    # a second bound on the same word: "use the word 'sun' at least twice but no more than 4
    # times" (the two merge into one range)
    Phrasing(
        rf"(?P<words>{QUOTE_ITEM})[^.;!?\n]{{0,40}}?\b{TIMES_EN}\s*,?\s+(?:but|and)\s+"
        rf"(?P<q2>{QUALIFIER_EN})\s+(?P<n2>{EN_NUMBER})\s+times\b", _second_bound,
        kind="keyword", example='Use the word "sun" at least twice but no more than 4 times.',
        counter="Use the word 'but' no more than once."),
    # a second word and its count after the first: "... at least once and 'nutmeg' at least
    # twice"
    Phrasing(
        rf"\band\s+(?:the\s+{_NOUN}\s*)?(?P<words>{QUOTE_ITEM})\s+{TIMES_EN}", _second,
        kind="keyword", example="Use 'sun' at least twice and 'moon' at most once.",
        counter='Use the words "sun" and "moon" at least twice.'),
    Phrasing(
        rf"\b(?:the\s+)?{_NOUN}\s+(?:(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_ONE}))\s+(?:(?:should|"
        r"must|may|can|is\s+to|are\s+to)\s*(?:not|n['’]t)|(?:does|do)\s*(?:not|n['’]t)|never)\s+"
        r"(?:ever\s+)?"
        rf"(?:{_APPEAR}|be\s+(?:said|written|mentioned|included|present))", _used("forbid"),
        kind="forbidden_word", example='The word "river" must not appear anywhere.',
        counter='The word "river" must appear in your reply.'),
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s+(?:(?:should|must|may|can|will|shall|does|do)\s*(?:not"
        rf"|n['’]?t)|"
        r"doesnt|dont|never|won['’]?t)\s+(?:ever\s+)?(?:appear|show\s+up|come\s+up|occur"
        r"|be\s+used)\s+"
        rf"{TIMES_EN}", _not_over,
        kind="keyword", example="The letter 'q' must not appear more than 3 times.",
        counter='Use the letter "q" no more than 2 times.'),
    Phrasing(
        rf"(?P<words>{QUOTE_LIST})\s+(?:(?:should|must|may|can|will|shall|does|do)\s*(?:not"
        rf"|n['’]?t)|"
        r"doesnt|dont|never|won['’]?t)\s+(?:ever\s+)?(?:appear|show\s+up|come\s+up|occur|be\s+"
        r"(?:used|"
        r"said|written|mentioned|included))\b(?!\s+(?:more|less|fewer|over|under|at\s+(?:most"
        r"|least)|"
        r"\d|once|twice))", _used("forbid"),
        kind="forbidden_word", example='The word "river" must not appear anywhere.',
        counter='The word "river" must appear in your reply.'),
    Phrasing(
        rf"(?:\b(?:the\s+)?{_NOUN}\s+)?(?P<words>{QUOTE_LIST})\s+(?:is|are)\s+(?:strictly\s+)?"
        r"(?:forbidden|banned|not\s+allowed|prohibited|off[\s-]limits|taboo|not\s+permitted)",
        _used("forbid"),
        kind="forbidden_word", example="The word 'literally' is strictly forbidden.",
        counter="The word 'literally' is overused."),
    # "at least 3 instances of the word 'X'"
    Phrasing(
        rf"(?:\b(?P<q>{QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:instances|occurrences|mentions|"
        rf"uses|repetitions)\s+of\s+(?:the\s+)?(?:{_NOUN}\s+)?(?:(?P<words>{QUOTE_LIST})|"
        rf"(?P<bare>{_BARE_ONE}))", _instances,
        kind="keyword",
        example="Add at least 1 uses of the word 'leaf' (this very word, not another form of it).",
        counter='Include the word "leaf" at least 2 times.'),
    # labelled lists: "Keywords: a, b", "Banned words: 'x', 'y'"
    Phrasing(
        rf"(?:^|(?<=[,，;；。.]))\s*(?:[-*•]\s*)?(?:required\s+)?(?:key\s*words?|keywords?"
        rf"|must-use\s+"
        rf"words)\s*(?:to\s+(?:include|use)\s*|\([^()\n]{{1,30}}\)\s*)?(?:[:：]|\s[-–—])\s*(?:"
        rf"(?P<words>{QUOTE_LIST})|"
        rf"(?P<bare>{_BARE_LIST}))", _used("use"),
        kind="keyword", example="Keywords to include - budget, timeline.",
        counter='Make sure to include the words "budget" and "timeline".'),
    Phrasing(
        rf"\b(?:forbidden|banned|prohibited|taboo|excluded|off-limits|blacklisted)"
        rf"\s+(?:{_NOUN}|vocabulary|vocab)\s*[:：]"
        rf"\s*(?:(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_LIST}))", _used("forbid"),
        kind="forbidden_word", example="Banned vocabulary: 'delve', 'tapestry'.",
        counter="Max 60 words."),
    # "Words to avoid: 'cheap', 'deal'", "Do not use: 'x', 'y'"
    Phrasing(
        rf"\b(?:{_NOUN}\s+(?:to\s+(?:avoid|exclude|leave\s+out|skip|omit|steer\s+clear\s+of)|"
        rf"(?:you\s+)?"
        r"(?:must|should|can|may)\s*(?:not|n['’]?t)\s+use|not\s+to\s+use|that\s+are\s+(?:banned|"
        r"forbidden|off[\s-]limits))|(?:do\s+not|don['’]?t|never)\s+use)\s*[:：]\s*(?:"
        rf"(?P<words>{QUOTE_LIST})|(?P<bare>{_BARE_LIST}))", _used("forbid"),
        kind="forbidden_word", example="Words to avoid: 'cheap', 'deal'.",
        counter='Avoid the words "cheap", "free" and "bargain".'),
)

TABLES = (Table(_I | re.M, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
