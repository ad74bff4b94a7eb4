"""The whole response's case read by its name, recall first: what the pre-pass tries when the
enumerated rows of `case` read neither `lowercase` nor `uppercase` in the request. A case
named in a clause about the response is the response's case:
- all capitals: "all caps", "in caps", "capital letters", "in capitals", "uppercase", "block
  capitals", "block letters" ("shouting in caps is the vibe", "make the announcement capital
  letters", "I want the reply uppercase, it's for a banner");
- all lowercase: "lowercase", "small letters", and capitals refused ("no capital letters",
  "without any capitals", "not one capital", "don't capitalize anything", "zero caps").

Unless a structural exclusion holds: a count of words ("N words in all caps", "all caps for
some words", "capitalize a few key terms": `capital_word_count`'s, or one part); one part only
(the title, a heading, the first word or letter, names, acronyms, a label, the subject line,
the key terms, one line: "the headline in all caps", "every line starts with a capital
letter", "lowercase for the hashtags"); a contrast or a topic ("uppercase vs lowercase", "when
to use capital letters", "explain capitalization", "lowercase logos", a question about the
case); uppercase refused, which asks for no case ("don't write in all caps", "no ALL CAPS
please"); the user's own text or someone's habit ("my poem is in all caps", "my grandpa types
in capitals", "a robot that speaks in capital letters"). Both cases read give none.

Each row's build reads its mention and weighs every other mention the rows read: it gives the
case only when the request's mentions read name one case."""

from __future__ import annotations

import re

from rubrics.checks.numbers import EN_NUMBER
from rubrics.checks.phrasings.shared import (
    A_QUESTION,
    CLAUSE_BREAK,
    SENTENCE_BREAK,
    Build,
    Matcher,
    Phrasing,
    Read,
    Table,
    agreeing,
    rules_of,
    since,
)

_I = re.I | re.S

# --- the names of the cases
_UPPER = (r"(?:all[\s-]*caps|all[\s-]*capitals?|all[\s-]*capital\s+(?:letters|characters)|"
          r"(?<=\bin\s)caps\b|capital\s+(?:letters|characters)|(?<=\bin\s)capitals\b|"
          r"block\s+(?:capitals|letters|caps)|upper[\s-]*case(?:\s+(?:letters|characters))?|"
          r"full\s+caps|majuscules?|(?<=\bas\s)(?:a\s+capital|capitals)\b)")
_LOWER = r"(?:lower[\s-]*case(?:\s+(?:letters?|characters?))?|small\s+letters?|minuscules?)"
# capitals refused: "no capital letters", "without a single capital", "don't capitalize
# anything", "zero caps" (not "no all caps", a style refused)
_NO_CAPITALS = (r"(?:\b(?:no|zero|nary\s+a|without(?:\s+using)?(?:\s+(?:any|a\s+single|one|a))?|"
                r"not\s+(?:a\s+single|one|any|a)|(?:never|don['’]?t|do\s+not|must\s+not|"
                r"shouldn['’]?t|should\s+not|can['’]?t|cannot)\s+(?:use|include|put|have|type|"
                r"add|contain|feature|show)(?:\s+(?:any|a\s+single|one|a))?|avoid(?:ing)?(?:\s+(?:all|any))?)\s+"
                r"(?:uppercase\s+letters?|upper-case\s+letters?|capital(?:ized)?\s+letters?|"
                r"capitals?|caps|capitali[sz]ation)\b(?!\s+(?:lock|city|cities|of|gains?|"
                r"investment|punishment))|"
                r"\bnothing\s+(?:is\s+|should\s+be\s+)?capitali[sz]ed\b|"
                r"\b(?:don['’]?t|do\s+not|never|no\s+need\s+to)\s+capitali[sz]e\s+(?:anything|"
                r"a\s+(?:thing|single\s+(?:word|letter))|any(?:\s+(?:of\s+it|words?|letters?))?|"
                r"at\s+all|(?=[.!;\n]|$)))")
_NO_CAPITALS_RE = re.compile(_NO_CAPITALS, _I)

# --- the exclusions, each on the words around one mention
# a count of words, or some words ("3 words in all caps", "all caps for some words", "a few
# key terms in capitals"): `capital_word_count`'s, or one part's
_A_FEW = (rf"(?:\d+|{EN_NUMBER}|some|a\s+few|few|several|certain|key|important|main|one|a|"
          r"single|(?:at\s+least|at\s+most|no\s+more\s+than|up\s+to|fewer\s+than|less\s+than|"
          r"more\s+than|exactly|between)\s+\w+|couple\s+of|handful\s+of|the\s+most\s+\w+)")
_WORDS_BEFORE = re.compile(rf"\b(?<!every\s)(?<!each\s){_A_FEW}\s+(?:[\w'’-]+\s+){{0,2}}?"
                           r"(?:words?|terms?|phrases?|letters?)\b(?:\s+[\w'’-]+){0,5}?\s*$|"
                           r"[个位]\s*$|(?<!every\s)(?<!each\s)(?<!all\s)\bwords?\s+(?:(?:written|"
                           r"typed|set|put|should\s+be|must\s+be|are|is|to\s+be|fully|entirely)\s+)*"
                           r"(?:in|with|using)\s+$|\bcapitali[sz]e\s+\w+", re.I)
_WORDS_AFTER = re.compile(rf"\s+(?:for|on)\s+(?:{_A_FEW}|the\s+(?:\w+\s+)?(?:words?|terms?))\b|"
                          r"[\s-]+words?\b|\s*的?\s*(?:单词|词)", re.I)
# one part: "the headline in all caps", "lowercase for the hashtags", "first letter capital"
_PART = (r"(?:title|heading|headline|header|subheading|subject(?:\s+line)?|first\s+(?:word|letter|"
         r"line|sentence)|initials?|names?|acronyms?|abbreviations?|labels?|keywords?|key\s+"
         r"(?:words|terms|points|phrases)|brand|hashtags?|sign[\s-]?off|signature|greeting|"
         r"section\s+(?:names|titles|headers)|one\s+(?:line|sentence|word)|a\s+(?:line|sentence|"
         r"word)|lines?|sentences?|chorus|refrain|warnings?|tagline|slogan|call\s+to\s+action|"
         r"cta|nouns?|proper\s+nouns?|start|beginning|name)")
_PART_BEFORE = re.compile(
    rf"\b{_PART}\b(?:\s+(?!in\b)[\w'’-]+){{0,5}}?\s+(?:(?:written|typed|set|should|must|"
    r"is|are|to|be|stay|remain|go|appear|in|with|using|as|start\w*|begin\w*)\s+)*"
    r"(?:a\s+|an\s+)?$|"
    r"\b(?:start|begin|open|capitali[sz]e)\w*\s+(?:each|every|the|your|all)\b[^.;!?\n]*$",
    re.I)
_PART_AFTER = re.compile(
    rf"\s+(?:(?:only\s+)?(?:for|on|in)\s+(?:the|all|any|each|every|your|its|their)\s+"
    rf"(?!(?:entire|whole|response|answer|reply|text|output|thing|message|words?|letters?)\b)"
    rf"\w+|only\s+(?:for|on)\b|at\s+the\s+(?:start|beginning)\b|(?:for|on)\s+{_PART}\b|"
    r"['\"“‘]?\w['\"”’]?(?=[\s,.;:!?]|$))", re.I)
# a contrast or a topic: "uppercase vs lowercase", "when to use capital letters"
_CONTRAST = re.compile(r"\s*(?:and|or|vs\.?|versus|/|&)\s+(?:\w+\s+)?(?:upper|lower|capital|small|"
                       r"title|sentence|mixed|proper|normal)", re.I)
_CONTRAST_BEFORE = re.compile(r"\b(?:upper[\s-]*case|lower[\s-]*case|capital|small|title|sentence|"
                              r"mixed|proper|normal)\s+(?:case\s+|letters\s+)?(?:and|or|vs\.?|"
                              r"versus|/|&)\s+(?:\w+\s+)?$", re.I)
_TOPIC_BEFORE = re.compile(
    r"\b(?:when|why|whether|how|where|what)\s+(?:\w+\s+){0,4}$|\b(?:explain\w*|describ\w*|"
    r"discuss\w*|teach\w*|learn\w*|about|on|of|regarding|history|rules?|guide|lesson|tips?|"
    r"difference|meaning|use\s+of|than|between|over-?us\w*|mis-?us\w*|too\s+many)\s+"
    r"(?:the\s+)?(?:use\s+of\s+)?$", re.I)
_THING_AFTER = re.compile(r"[\s-]+(?:logos?|brand(?:s|ing)?|looks?|styles?|aesthetics?|fonts?|"
                          r"typefaces?|trends?|usernames?|handles?|signs?|keys?|buttons?|"
                          r"versions?\s+of|letters?\s+(?:of|in)\s+the\s+alphabet|and\s+lower|"
                          r"or\s+lower|people|writing\s+style|poets?|movement)\b", re.I)
# the user's own text or someone's habit: "my poem is in all caps", "my grandpa types in caps",
# "a robot that speaks in capital letters", "I wrote it in lowercase"
_NOT_THE_RESPONSE = re.compile(
    r"\b(?:my|our|this|these|his|her|their|the\s+attached|the\s+following)\s+(?:[\w'’-]+\s+)"
    r"{0,3}?(?:is|are|was|were|looks?)\s+(?:(?:written|typed|all|entirely|already)\s+)*"
    r"(?:in\s+)?$|"
    r"\b(?:I|we)\s+(?:\w+\s+)?(?:wrote|written|typed|drafted|received|got|have|had|use|type|"
    r"write|always|usually|often|tend)\b[^.;,!?\n]*$|"
    r"\b(?:he|she|who|whom|whose|which|that|where|(?:my|our|his|her|their|a|an|the)\s+"
    r"(?:[\w'’-]+\s+){0,2}?[\w'’-]+)\s+(?:\w+\s+)?(?:types|typing|writes|writing|texts|"
    r"texting|speaks|speaking|shouts|shouting|talks|talking|posts|posting|emails|messages|"
    r"squawks|yells|yelling|signs|wrote|typed|spoke|shouted|posted)\b[^.;,!?\n]*$|"
    r"\b(?:they|who|that|people|kids|users|some|folks|boomers)\s+(?:\w+\s+)?(?:type|write|"
    r"text|speak|shout|talk|post|yell|sign)\b[^.;,!?\n]*$|"
    r"\bI\s+(?:just\s+|already\s+)?(?:wrote|typed|drafted)\b[^.;!?\n]*$", re.I)
# a text the user gives: "Here's my poem, written in lowercase on purpose"
_GIVEN = re.compile(r"\b(?:here['’]?s|here\s+is|here\s+are|below\s+is|attached\s+is)\b", re.I)
# uppercase refused, a style refused (no case asked): "don't write in all caps", "no all caps"
_REFUSED = re.compile(r"\b(?:no|not|never|without|avoid\w*|(?:don['’]?t|do\s+not|never|please\s+"
                      r"don['’]?t|shouldn['’]?t|must\s+not|can['’]?t)\s+(?:\w+\s+){0,4}?)\s*(?:(?:in|"
                      r"use|using|any|with|an?|a\s+single|one|single)\s+)*$", re.I)
# letters of the case named, not the case as a style: refused, they ask for the other case
_LETTERS = re.compile(r".*(?:letters?|characters?)$|small|capital", re.I | re.S)


def _sentence(text: str, start: int, end: int) -> str:
    after = SENTENCE_BREAK.search(text, end)
    return since(SENTENCE_BREAK, text, start) + text[start:after.end() if after else len(text)]


def _excluded(m: re.Match[str]) -> bool:
    """Whether a structural exclusion holds of the mention: a count of words, one part, a
    contrast or a topic, a question, the user's own text or someone's habit."""
    text, start, end = m.string, m.start("case"), m.end("case")
    clause = since(CLAUSE_BREAK, text, start)
    sentence_before = since(SENTENCE_BREAK, text, start)
    after = text[end:end + 80]
    if _WORDS_BEFORE.search(clause) or _WORDS_AFTER.match(after):
        return True
    if _PART_BEFORE.search(clause) or _PART_AFTER.match(after):
        return True
    if _CONTRAST.match(after) or _CONTRAST_BEFORE.search(sentence_before) \
            or _TOPIC_BEFORE.search(clause) or _THING_AFTER.match(after):
        return True
    if _NOT_THE_RESPONSE.search(clause) or _GIVEN.search(sentence_before):
        return True
    return bool(A_QUESTION.match(_sentence(text, start, end)))


def _upper(m: re.Match[str]) -> str | None:
    """All capitals, unless refused ("don't write in all caps": capitals refused as letters are
    `_no_capitals`') or excluded; capital letters kept out ("keep the capital letters out of
    it") are all lowercase."""
    if _REFUSED.search(since(CLAUSE_BREAK, m.string, m.start("case"))[-40:]) or _excluded(m) \
            or any(no.start() <= m.start() < no.end() for no in _NO_CAPITALS_RE.finditer(m.string)):
        return None
    if _KEPT_OUT.match(m.string, m.end("case")):
        return "lowercase" if re.match(r"capital|upper", m.group("case"), re.I) else None
    return "uppercase"


def _lower(m: re.Match[str]) -> str | None:
    """All lowercase, unless excluded; lowercase letters refused ("not one lowercase letter
    anywhere") are all capitals, lowercase refused as a style ("don't write in lowercase") no
    case."""
    if _excluded(m):
        return None
    if _REFUSED.search(since(CLAUSE_BREAK, m.string, m.start("case"))[-40:]):
        return "uppercase" if _LETTERS.match(m.group("case")) else None
    return "lowercase"


# capitals said to be kept out after their name: "keep the capital letters out of it", "capitals
# are banned"
_KEPT_OUT = re.compile(r"\s+(?:out\b|(?:are|is)\s+(?:not\s+allowed|banned|forbidden|off[\s-]"
                       r"limits|a\s+no[\s-]go))", re.I)


def _no_capitals(m: re.Match[str]) -> str | None:
    """Capitals refused: all lowercase, unless excluded."""
    return None if _excluded(m) else "lowercase"


_READS: tuple[tuple[str, Read], ...] = (
    (rf"(?P<case>{_UPPER})", _upper),
    (rf"(?P<case>\b{_LOWER})", _lower),
    (rf"(?P<case>{_NO_CAPITALS})", _no_capitals),
)
# a mention's case, when every mention read names that one case
_ONE_CASE = agreeing(((re.compile(pattern, _I), read) for pattern, read in _READS),
                     lambda kind: (kind, {}))


_ROWS = (
    ("uppercase", "Make the announcement capital letters, it's going on a banner.",
     "Make the announcement headline capital letters."),
    ("lowercase", "A haiku about frogs, lowercase vibes throughout.",
     "Explain the difference between uppercase and lowercase letters."),
    ("lowercase", "A toast for my sister, not one capital anywhere.",
     "A toast for my sister, no capital letters in the names."),
)

_PHRASINGS: tuple[Phrasing, ...] = tuple(
    Phrasing(pattern, _ONE_CASE(read), kind=kind, example=example, counter=counter)
    for (pattern, read), (kind, example, counter) in zip(_READS, _ROWS, strict=True))

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
