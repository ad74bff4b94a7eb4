"""The response's language read by its name, recall first: what the pre-pass tries when the
enumerated rows of `language` and `people` read no language in the request. A language named
(by its English name, its own name or an alias the tables know: "Deutsch", "Farsi", "Bahasa
Indonesia", "Simplified Chinese", "Mandarin") where the words govern the response is the
response's language:
- after "in", wherever it stands ("can you give me some tips on sleeping in Greek?",
  "something for the fridge door in Swahili for my nanny");
- as a clause of its own before or after the task ("Hindi, please: ...", "... Thai
  preferred.", "— Swahili, if you can.");
- as the object of a verb of using or choosing, or said of the text ("could you use Farsi",
  "stick to Bahasa Indonesia", "make it Thai", "the caption should be Korean");
- as the adjective of a text asked for ("draft an Urdu reminder for the tenants");
- as the only language the reader reads, speaks or understands ("my grandmother speaks only
  Tamil, write her a note", "for readers who only know Bengali").

Unless a structural exclusion holds of that mention: a translation target or source
("translate ... into X", "an X translation / version / equivalent", "from X"); a topic
("learning / teaching / about / the history of X", "X grammar / class / teacher / food /
literature", any noun X qualifies bar a text asked for: "a French restaurant", "Japanese
gardens"); a question about words or the language ("what does ... mean in X", "how do you say
... in X", "Is Korean hard to write?"); a quote the user includes; a negation ("not in X",
"no X", "don't use X"); one part only ("the title in X", "a greeting in X, then ...", "include
one X phrase"); a list or comparison of languages ("X and Y", "X vs Y", "X is harder than
Y"); the user's own text ("my notes are in German", "I wrote a cover letter in English",
"Here's a paragraph in Dutch"); a character's language ("a story about a boy who speaks only
French"); the idiom "plain English". Two different languages read so give none (ambiguous).

Each row's build reads its mention and weighs every other mention the rows read in the
request: it gives the language only when the request's mentions read name one language."""

from __future__ import annotations

import re

from rubrics.checks.phrasings.languages.names import LANGUAGE_NAMES, code_of
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
_LANG = rf"(?P<lang>{LANGUAGE_NAMES})(?!\w)(?!-(?!language\b))"

# --- what may follow a language's name that governs the response: the clause's end or a
# word that opens a new part of it, never a noun the name qualifies ("French schools",
# "Japanese gardens", "Spanish teacher") nor a verb it is the subject of ("Korean is hard")
_FOLLOW_WORDS = (r"please|pls|plz|only|exclusively|throughout|entirely|instead|too|also|again|"
                 r"and|but|so|for|to|with|without|about|on|that|which|because|since|if|when|"
                 r"while|by|from|at|here|now|thanks|thank|thx|as|of\s+course|obviously|"
                 r"naturally|preferably|ideally|if\s+possible|por\s+favor|bitte|then|though|"
                 r"describing|explaining|telling|giving|asking|thanking|inviting|announcing|"
                 r"apologi[sz]ing|covering|summari[sz]ing|saying|introducing|welcoming|"
                 r"listing|congratulating|reminding|letting|wishing|offering|declining|"
                 r"requesting|using|keeping|making|no|not|or|is\s+(?:fine|best|preferred|"
                 r"ok|okay|great)|would\s+be|preferred|language|version\s+only")
_END = rf"\s*(?:$|[.,;:!?)\]\"'”’(—–\n。，；：！？）]|-\s|(?:{_FOLLOW_WORDS})\b)"
_FOLLOWS = re.compile(rf"(?:-language\b)?{_END}", re.I)
# a text the language's name may qualify when it is asked for: "an Urdu reminder"
_TEXT_NOUNS = (r"(?:blurb|caption|slogan|tagline|bio|email|e-mail|letter|note|message|essay|"
               r"summary|paragraph|copy|post|tweet|greeting|speech|description|introduction|"
               r"intro|ad|advert|advertisement|announcement|notice|invitation|pitch|reply|"
               r"response|answer|text|reminder|memo|flyer|leaflet|brochure|toast|newsletter|"
               r"explanation|update|statement|notice|sign|label|report|review|article|script|"
               r"card|postcard|thank-you|apology|request|instructions?|guide|overview|recap|"
               r"line|wish|wishes|version\s+only)")
_ADJECTIVE_FOLLOWS = re.compile(
    rf"(?:-language)?\s+(?:[\w-]+\s+)?{_TEXT_NOUNS}(?=\s+(?:for|to|about|on|in|that|which|with|"
    rf"from|of)\b|{_END})", re.I)

# --- the exclusions, each on the words around one mention
# a translation, its target or source: "translate ... into X", "an X version", "from X"
_TRANSLATED_BEFORE = re.compile(
    r"\b(?:translat\w*|render(?:s|ed|ing)?|convert\w*|interpret\w*|transcrib\w*|dub(?:s|bed|bing)?|"
    r"subtit\w*)\b[^.!?\n]*$|\b(?:into|from)\s+(?:the\s+)?(?:original\s+)?$", re.I)
_TRANSLATED_AFTER = re.compile(r"(?:-language)?\s+(?:translation|version(?!\s+only)|equivalent|"
                               r"counterpart|rendering|subtitles?|dub|original|edition|"
                               r"transcript)s?\b", re.I)
# a topic: "learning X", "about X", "the history of X", "X as a second language"
_TOPIC_BEFORE = re.compile(
    r"\b(?:learn\w*|teach\w*|taught|study\w*|studied|practi[cs]\w*|master\w*|improv\w*|"
    r"brush\w*\s+up\s+on|fluent|fluency|about|regarding|of|on|between|like|than|"
    r"speakers?\s+of|native|natives)\s+(?:(?:the|my|your|our|their|his|her|basic|some|"
    r"conversational|written|spoken|business)\s+)*$", re.I)
_TOPIC_AFTER = re.compile(r"\s+(?:as\s+a|speakers?|learners?|natives?|speaking|spoken|"
                          r"is|are|was|were|has|have|had|does|do|did|uses?|sounds?|"
                          r"capitali[sz]es)\b", re.I)
# a question about words or the language: "what does X mean in Y", "how do you say ..."
_ABOUT_WORDS = re.compile(r"(?:\b(?:mean|means|meaning|called|pronounce\w*|spell\w*|word\s+for|"
                          r"term\s+for)\b|\bhow\s+(?:do|would|can|could|should)\s+(?:you|I|we|one)"
                          r"\s+say\b|\bsay\s+['\"“‘])[^.!?\n]*$", re.I)
# the language as where a topic holds: "Summarize how verbs work in Spanish"
_HOW_IT_WORKS = re.compile(r"\b(?:how|why|what|whether|when|where)\b[^.;!?\n]*\b(?:work|works|"
                           r"function|functions|behave|behaves|used|formed|spelled|spelt|"
                           r"pronounced|conjugated|declined|expressed|marked|capitali[sz]ed|"
                           r"spoken|differ|differs|different)\s+in\s+$", re.I)
# a question after the name and a colon or dash about what was named: "Reference letters in
# French: how formal should they be?"
_QUESTION_AFTER = re.compile(r"[^.!?\n]*?[:—–]\s*(?:what|why|how|which|when|where|who|is|are|"
                             r"does|do|should|can|could)\b[^?\n]*\b(?:they|them|these|those)\b"
                             r"[^?\n]*\?", re.I)
# a negation: "not in X", "no X", "don't use X", "without X", "instead of X"
_NEGATED = re.compile(
    r"\b(?:not|no|non|never|without|except|avoid\w*|instead\s+of|rather\s+than|other\s+than|"
    r"anything\s+but|(?:don['’]?t|do\s+not|never|doesn['’]?t|does\s+not|can['’]?t|cannot|"
    r"won['’]?t)\s+(?:\w+\s+){0,4}?(?:in\s+)?)\s*(?:(?:in|use|using|any|a\s+word\s+of|"
    r"plain|simple|formal)\s+)*[-\s]*$", re.I)
# one part only: the part named before "in X" ("the title in French", "a greeting in Polish"),
# an edge or an insertion ("end with a blessing in Tamil", "sprinkle in a Spanish phrase"),
# a few of something ("include one Spanish phrase"), or what follows it ("..., then ...");
# and things in a language the response lists or names ("books in French", "10 words in Thai")
_PART_NOUNS = (r"(?:(?:title|heading|headline|header|subheading|subject\s+line|greeting|"
               r"salutation|sign[\s-]?off|signature|closing\s+line|opening\s+line|motto|"
               r"proverb|saying|idiom|expression|hashtag|p\.\s?s\.?|postscript|chorus|refrain|"
               r"label|blessing|word|phrase|term|name|quote|quotation|footnote|lyric|caption\s+"
               r"line)s?|(?:first|last|final|opening|closing)\s+(?:line|sentence|word|paragraph|"
               r"part)s?|books|films|movies|songs|poems|novels|shows|podcasts|videos|examples|"
               r"numbers|literature|music|media|vocabulary|slang)")
_PART_BEFORE = re.compile(
    rf"\b(?P<part>{_PART_NOUNS})\b(?:\s+(?!(?:in|and|or)\b)[\w'’-]+){{0,2}}\s+(?:(?:written|said|"
    r"given|put|set|done|kept|only|entirely)\s+)?in\s+(?:\w+\s+)?$|"
    r"\b(?:one|a\s+single|a\s+few|a\s+couple\s+of|several|few|two|three|\d+)\s+"
    r"(?:(?:short|little)\s+)?$|"
    r"\b(?:end(?:s|ed|ing)?|finish(?:es|ed|ing)?|close|closing|conclud(?:e|es|ing)|sign(?:s|ing)?"
    r"\s+off|sprinkl\w+|throw(?:s|ing)?\s+in|mix(?:es|ing)?\s+in|insert\w*|drop(?:s|ping)?\s+in|"
    r"includ(?:e|es|ing))\b[^.;,!?\n]*$",
    re.I)
# (a part noun that is the text asked for is no part: "write a greeting in Chinese")
_ASKED = re.compile(r"\b(?:write|draft|compose|create|give|send|make|need|want|prepare|craft|"
                    r"like)\s+(?:(?:me|us|her|him|them)\s+)?(?:a|an|one)\s+(?:[\w'’-]+\s+){0,4}$",
                    re.I)
_WHOLE_TEXT_PART = re.compile(r"greeting|salutation|blessing|motto|label|chorus|saying|proverb|"
                              r"caption\s+line", re.I)
_PART_AFTER = re.compile(r"\s*[,;]?\s*(?:and\s+)?(?:then\b|followed\s+by|before\s+(?:the|you|"
                         r"switching)|and\s+the\s+rest|the\s+rest|with\s+the\s+rest)", re.I)
# a label naming a topic or a source: "Subject: English", "Source language: German"
_LABEL = re.compile(r"\b(?:subject|class|course|topic|module|lesson|exam|grade|major|"
                    r"department|level|from|source(?:\s+language)?|original(?:\s+language)?|"
                    r"input(?:\s+language)?)\s*[:：]\s*$", re.I)
# a list or comparison of languages: "French and Spanish", "Italian, German or Polish"
_LIST_AFTER = re.compile(rf"\s*(?:,|/|&|\+|\band\b|\bor\b|\bvs\.?|\bversus\b|\bthen\b)\s*(?:and\s+"
                         rf"|or\s+|then\s+|(?:a\s+bit\s+of|some|also)\s+)?(?:in\s+)?"
                         rf"(?:{LANGUAGE_NAMES})\b", re.I)
_LIST_BEFORE = re.compile(rf"\b(?:{LANGUAGE_NAMES})\s*(?:,|/|&|\+|\band\b|\bor\b|\bvs\.?|"
                          rf"\bversus\b|\bthen\b)\s*(?:and\s+|or\s+|then\s+|(?:a\s+bit\s+of|"
                          r"some|also)\s+)?(?:in\s+)?$", re.I)
# "polish the draft", "polish it up": the verb, not the language
_POLISH_THE = re.compile(r"\s+(?:the|my|this|that|it|up|these|those|your|our|off|a|an)\b", re.I)
# the user's own text: "my notes are in German", "I wrote a cover letter in English"
_USERS_OWN = re.compile(
    r"\b(?:my|our|this|these|the\s+attached|the\s+following|his|her|their|the|a|an)\s+"
    r"(?!(?:response|answer|reply|output|whole|entire|final)\b)(?:[\w'’-]+\s+)"
    r"{0,3}?(?:is|are|was|were)\s+(?:(?:written|all|entirely|mostly|originally|already|only)\s+)*"
    r"(?:in\s+)?$|"
    r"\b(?:I|we)\s+(?:\w+\s+)?(?:wrote|written|received|got|have(?!\s+to)|had(?!\s+to)|typed|"
    r"drafted|found|saw|heard|copied|pasted)\b[^.;,!?\n]*$|"
    r"\b(?:here['’]?s|here\s+is|here\s+are|below\s+is|attached\s+is|this\s+is)\b[^.;!?\n]*$|"
    r"\b(?:wrote|sent|emailed|texted|messaged|posted|left|received)\b[^.;,!?\n]*\bin\s+$",
    re.I)
# a character's or someone's language told of, not asked of the response: "a boy who speaks
# only French", "my colleague, whose emails are in German"
_RELATIVE = re.compile(r"(?:\b(?:who|whom|whose|which|where)|\b(?:a|an|the|some)\s+"
                       r"(?:[\w'’-]+\s+){0,2}that)\b[^.;,!?\n]*$", re.I)
_STORY = re.compile(r"\b(?:story|stories|tale|scene|poem|song|novel|fable|dialogue|play|skit|"
                    r"featuring|starring|character)\b", re.I)
# the idiom: "explain in plain English" (simply, not a language asked)
_IDIOM = re.compile(r"\bplain\s+$", re.I)
# a quote the user includes
_QUOTE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」")
# a request for a text somewhere: what a reader's language is the language of
_WRITE = re.compile(r"\b(?:write|draft|compose|create|make|prepare|send|reply|respond|answer|"
                    r"explain|tell|give|put\s+together|help\s+me\s+(?:write|say)|need|want|ask|"
                    rf"invite|poem|story|song|{_TEXT_NOUNS})\b", re.I)


def _sentence_after(text: str, at: int) -> str:
    """The text from `at` to the end of its sentence."""
    end = SENTENCE_BREAK.search(text, at)
    return text[at:end.end() if end else len(text)]


def _in_a_quote(text: str, start: int) -> bool:
    """Whether `start` lies inside words the request quotes."""
    return any(q.start() < start < q.end() for q in _QUOTE.finditer(text))


def _excluded(m: re.Match[str], *, reader: bool = False) -> bool:
    """Whether a structural exclusion holds of the mention: a translation, a topic, a
    question about words or the language, a negation, one part, a list of languages, the
    user's own text, a character's language, a quote or the idiom "plain English"."""
    text, start, end = m.string, m.start("lang"), m.end("lang")
    name = m.group("lang")
    if name.islower() and code_of(name) == "pl" and _POLISH_THE.match(text, end):
        return True  # "polish the draft": the verb
    sentence = since(SENTENCE_BREAK, text, start)
    clause = since(CLAUSE_BREAK, text, start)
    after = text[end:end + 80]
    whole_sentence = sentence + _sentence_after(text, start)
    if _in_a_quote(text, start) or _IDIOM.search(clause) or _LABEL.search(sentence):
        return True
    if _TRANSLATED_BEFORE.search(sentence) or _TRANSLATED_AFTER.match(after):
        return True
    listed = _LIST_BEFORE.search(sentence)
    if _LIST_AFTER.match(after) or listed and not _NEGATED.search(sentence[:listed.start()][-40:]):
        return True
    if _NEGATED.search(clause[-40:]) or _ABOUT_WORDS.search(sentence):
        return True
    if not reader and (_TOPIC_BEFORE.search(clause) or _TOPIC_AFTER.match(after)):
        return True
    part = _PART_BEFORE.search(clause)
    if part and not (part.group("part") and _WHOLE_TEXT_PART.fullmatch(part.group("part"))
                     and _ASKED.search(clause, 0, part.start())) \
            or _PART_AFTER.match(after):
        return True
    if _USERS_OWN.search(clause):
        return True
    if reader and _STORY.search(sentence) or not reader and _RELATIVE.search(clause):
        return True
    if _HOW_IT_WORKS.search(sentence) or _QUESTION_AFTER.match(_sentence_after(text, end)):
        return True
    # (a question about the language, not one set off after a comma: "..., in Greek?")
    return bool(A_QUESTION.match(whole_sentence) and not reader
                and not re.search(r",\s*(?:in\s+)?$", text[:start]))


def _governs(m: re.Match[str], *, follows: re.Pattern[str] = _FOLLOWS,
             reader: bool = False) -> str | None:
    """The mention's language when the words after it end its clause or open another (or
    name the text asked for, for an adjective) and no exclusion holds; None otherwise."""
    if not follows.match(m.string, m.end("lang")) or _excluded(m, reader=reader):
        return None
    return code_of(m.group("lang"))


# --- the cues a mention governs the response by, each a row
_REGISTER = (r"(?:(?:simple|formal|informal|polite|casual|fluent|proper|standard|basic|easy|"
             r"modern|good|correct|clear|natural|everyday|colloquial|written|spoken)\s+)?")
# a clause's start: the request's, a sentence's, after a comma, colon, dash or parenthesis
_CLAUSE_START = r"(?:^|(?<=[.!?;:,(\n—–])|(?<=[.!?;:,(—–]\s)|(?<=\s-\s))"
_FILLERS = (r"(?:(?:and|but|so|also|oh|ok|okay|just|all|entirely|only|strictly|preferably|"
            r"ideally|please|pls|plz|and\s+please|oh\s+and|btw|by\s+the\s+way)\s*,?\s+)*")
_SPEAK = r"(?:speaks?|reads?|understands?|knows?|writes?)"
_READER = (rf"(?:(?:only|just|mostly|mainly)\s+{_SPEAK}|{_SPEAK}\s+(?:only|just)|"
           rf"(?:can|could)\s+only\s+(?:read|speak|understand)|{_SPEAK}|"
           r"(?:first|native|home|only|mother|preferred)\s+(?:language|tongue)\s+is)")
# the subject of a reader's verb: someone else, or the user reading only one language
_WHO = (r"(?P<who>she|he|they|who|whose|I|we|(?:most|all|many|some|half)\s+of\s+(?:them|whom|"
        r"(?:my|our|the)\s+[\w'’-]+)|(?:my|our|his|her|their|the|your)\s+(?:[\w'’-]+\s+){0,2}?"
        r"[\w'’-]+)")
_SOMEONE = re.compile(
    rf"\b{_WHO}\s+(?:(?:also|still|really|mostly|mainly|actually|can|could|does|do|barely)\s+)?$",
    re.I)
# (said of them first: "She's from Brazil and only reads Portuguese")
_SOMEONE_AND = re.compile(
    rf"\b{_WHO}(?:['’]s|\s+is|\s+are)\s+(?:[\w'’-]+\s+){{0,5}}?(?:and|but)\s+$", re.I)
# a story about a character the request tells: a reader's language may be the character's ("She
# only reads Greek. Write a story about a woman who dreams in her language.")
_A_CHARACTER = re.compile(r"\b(?:story|stories|tale|scene|fable|novel|poem)\s+(?:about|featuring|"
                          r"of)\s+(?:a|an|the|my|our)\s+(?:[\w'’-]+\s+){0,2}?(?:who|that|whose)\b",
                          re.I)
_SPEAKER_ONLY = re.compile(r"\b(?:only|just|mostly|mainly)\b|language|tongue", re.I)


def _read(m: re.Match[str]) -> str | None:
    """A mention after "in", as a clause of its own, or after a verb of using."""
    return _governs(m)


def _adjective(m: re.Match[str]) -> str | None:
    """The name as the adjective of a text asked for: "draft an Urdu reminder"."""
    return _governs(m, follows=_ADJECTIVE_FOLLOWS)


def _reader(m: re.Match[str]) -> str | None:
    """The language the reader reads, speaks or understands (only), when the request asks
    for a text: "my grandmother speaks only Tamil, write her a note"."""
    text = m.string
    before = text[:m.start()]
    subject = _SOMEONE.search(before[-60:]) or _SOMEONE_AND.search(before[-60:])
    if not subject or not _WRITE.search(text) or _A_CHARACTER.search(text):
        return None
    if subject.group("who").lower() in ("i", "we") and not _SPEAKER_ONLY.search(m.group(0)):
        return None
    if re.search(r"\b(?:doesn['’]?t|does\s+not|don['’]?t|do\s+not|can['’]?t|cannot|never)\s+"
                 r"(?:\w+\s+)?$", before[-40:]):
        return None
    return _governs(m, reader=True)


_READS: tuple[tuple[str, Read], ...] = (
    # after "in": "some tips on sleeping in Greek?", "a note for the door in Swahili"
    (rf"\bin\s+(?:the\s+)?{_REGISTER}{_LANG}", _read),
    # a clause of its own: "Hindi, please:", "Thai preferred.", "— Swahili, if you can."
    (rf"{_CLAUSE_START}\s*{_FILLERS}(?:(?:in|use|using)\s+)?{_LANG}(?=(?:-language)?\s*"
     r"(?:,?\s*(?:please|pls|plz|only|preferred|preferably|if\s+possible|if\s+you\s+can|"
     r"thanks|thank\s+you|thx|por\s+favor|bitte|is\s+(?:fine|best|preferred|ok|okay|great)|"
     r"would\s+be\s+\w+|of\s+course|obviously|naturally|for\s+(?:this(?:\s+one)?|me|us|"
     r"them|her|him)|here)\b)*\s*[!.]*\s*(?:[.!?;:,)\n—–]|$))",
     _read),
    # the object of a verb of using or choosing, or what the text is said to be
    (rf"\b(?:use|using|prefer|switch\w*\s+(?:to|over\s+to)|stick\w*\s+(?:to|with)|go\s+with|"
     rf"(?:keep|make)\s+(?:it|everything|the\s+whole\s+thing|(?:the|your)\s+(?:response|answer|"
     rf"reply|text|output|message))|"
     rf"(?:should|must|has\s+to|needs?\s+to|will|shall)\s+be|(?:be|is)\s+(?:all|entirely|"
     rf"purely|100%|only)|choose|pick)\s+(?:(?:only|just|entirely|all|purely)\s+)?{_LANG}",
     _read),
    # the adjective of a text asked for: "draft an Urdu reminder for the tenants"
    (rf"\b(?:need|want|write|compose|draft|create|make|give|send|get|produce|prepare|provide|"
     rf"craft|put\s+together|like)\s+(?:(?:me|us|her|him|them|my\s+\w+)\s+)?(?:a|an|one|some)\s+"
     rf"(?:[\w-]+\s+)?{_LANG}", _adjective),
    # the reader's language: "she only reads Polish", "readers who only know Bengali"
    (rf"\b{_READER}\s+{_LANG}", _reader),
)
# a mention's language, when every mention read names that one language
_ONE_LANGUAGE = agreeing(((re.compile(pattern, _I), read) for pattern, read in _READS),
                         lambda code: ("language", {"language": code}))


_EXAMPLES = (
    ("Can you give me some tips on sleeping better in Greek?",
     "Can you teach me some words in Greek?"),
    ("Three tips for a first date. Swahili, if you can.",
     "Three tips for a first date. Swahili and Zulu."),
    ("Could you stick to Bahasa Indonesia? What should I pack for Bali?",
     "Could you stick to Bahasa Indonesia grammar rules? Explain them."),
    ("Please draft an Urdu reminder for the tenants about the water cut.",
     "Please draft a review of an Urdu film for the tenants."),
    ("My grandmother speaks only Tamil, so write her a note for her birthday.",
     "I speak Tamil and a bit of Hindi. Which is easier to learn?"),
)

_PHRASINGS: tuple[Phrasing, ...] = tuple(
    Phrasing(pattern, _ONE_LANGUAGE(read), kind="language", example=example, counter=counter)
    for (pattern, read), (example, counter) in zip(_READS, _EXAMPLES, strict=True))

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
