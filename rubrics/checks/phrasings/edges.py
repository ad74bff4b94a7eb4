"""The ways a request states the exact words its response must open or close with: a verb
and its object ("end your reply with the exact sentence ...", "finish with the line ...",
"sign off with ...", "begin your answer with the words ..."), the last or first line as a
subject ("the last line must be ...", "its final line should read exactly: ...", "the first
word of your response should be ..."), and the Chinese forms ("以“…”结尾", "最后一句话请写
“…”", "开头第一句必须是“…”", "用“…”开头").

The phrase is the quoted words, quotes removed, or the words after a colon or "the exact
phrase" up to the sentence's end, without "and nothing else". A phrase one part must open or
close with ("end each paragraph with ...", "the first word of paragraph 2") is not the
response's, nor is one the user's own text already has ("My toast already ends with ..."); nor
is a closing that is no phrase ("end with a question"), nor the quotation marks themselves
named ("begin with " and finish with "": the whole reply in quotes, `formats`'s)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER
from rubrics.checks.phrasings.shared import (
    QUOTE_ITEM,
    Build,
    Matcher,
    Phrasing,
    Table,
    quoted_words,
    rules_of,
)

_I = re.I | re.S
_END_VERBS = (r"(?:end|ends|ending|finish|finishes|finishing|conclude|concludes|concluding|"
              r"close|closes|closing|wrap\s+up|wraps\s+up|sign\s+off|signs\s+off|round\s+off|"
              r"cap\s+off|sign|signs|wrap|wraps|round|cap|top)")
_START_VERBS = (r"(?:start|starts|starting|begin|begins|beginning|open|opens|opening|commence|"
                r"commences|commencing|"
                r"kick\s+off|lead\s+off|kick|kicks|lead)")
# the particle of a phrasal verb after its object: "sign the email off with", "kick things off"
_PARTICLE = r"(?:(?:off|up|out)\s+)?"
# the parts a phrase may be asked of instead of the whole: "each paragraph", "the first line"
_PART = (r"(?:each|every|all|any|(?:the\s+)?(?:first|second|third|fourth|fifth|last|final|"
         r"next|\d+(?:st|nd|rd|th))|(?:your|the|this|that)\s+(?:\w+\s+)?(?:paragraphs?|stanzas?|"
         r"verses?|sections?|sentences?|lines?|bullets?|items?|chapters?|parts?|points?))\b")
# the verb's object: the response ("it", "your reply", "the whole email"), never a part
# (a noun of two words too: "close out the pep talk with ...")
_OBJECT = (rf"(?:(?!{_PART})(?:it|things|everything|(?:your|the|this|my)\s+"
           r"(?:(?:entire|whole|full|final)\s+)?[\w-]+(?:\s+(?!with\b|by\b|on\b)[\w-]+)?)\s+)?")
# what introduces the phrase: "with the exact sentence:", "by saying", "on the line"
_WITH = (r"(?:with|w/|by\s+(?:saying|writing)|on)(?:\s+|\s*(?=[:,]))"
         r"(?:(?:exactly|precisely|verbatim)\s*:?\s+)?(?:(?:the|this|that|these|a|an)\s+)?(?:(?:exact|precise|following|same|very)\s+)?(?:"
         r"(?:phrase|sentence|line|words?|"
         r"question|statement|quote|sign[\s-]?off|greeting|salutation|text)\s*)?(?:[:,]\s*)?")
# the same, before a phrase with no quotes: "with the exact phrase", "with:"
_WITH_BARE = (r"with(?:\s+(?:(?:the|this|that)\s+)?(?:(?:exact|precise|following)\s+(?:phrase|"
              r"sentence|line|words?|question|statement|greeting|sign[\s-]?off)\s*:?|(?:phrase"
              r"|sentence|line|words?)"
              r"(?:\s+(?:exactly|verbatim|word\s+for\s+word))?\s*:|(?:phrase|sentence|"
              r"line)\s+(?=(?-i:[A-Z])))|\s*:)\s*")
# a phrase asked of something the request asks about: "describe how the film ends with ..."
# (only in its own clause: "tell me why octopuses are cool and wrap up with ..." asks for one)
_ABOUT = re.compile(r"\b(?:how|why|whether)\b(?:(?!\b(?:and|but|then)\b)[^.;!?,\n])*$", re.I)
# a part as the subject of the verb: "paragraph 2 must begin with", "the first must start with",
# "a postscript beginning with"
_PART_SUBJECT = re.compile(
    r"\b(?:paragraphs?|stanzas?|verses?|sections?|sentences?|lines?|bullets?|items?|chapters?|"
    r"parts?|points?|postscripts?|first|second|third|fourth|fifth|last|other|each|every)(?:\s+(?:\d+|one|two|"
    r"three|four|five|one))?\s+(?:(?:must|should|will|shall|has\s+to|have\s+to|needs?\s+to|"
    r"ought\s+to|is\s+to|are\s+to|can)\s+(?:also\s+|all\s+)?)?$", re.I)
# "its" after a part as the subject of the clause before: "the second section must list
# requirements in bullet points and its first word should be ..." (not "Write a poem; its first
# line should be ...")
_ITS_PART = re.compile(
    r"\b(?:the\s+(?:\w+\s+)?)?(?:paragraph|stanza|verse|section|sentence|line|bullet|item|chapter|"
    r"part|point)s?(?:\s+\d+)?\s+(?:must|should|will|shall|has\s+to|needs?\s+to|is\s+to|are\s+to|"
    r"can)\b[^.;!?\n]*$", re.I)
# the first or last line as a subject: "the poem's final line", "the very last words of your
# answer"
_EDGE_NOUN = r"(?:line|sentence|words?|phrase|thing(?:\s+you\s+(?:write|say))?)"
_OWNER = (r"(?:(?:the|your|its|my)\s+(?:[\w-]+'s\s+)?|[\w-]+'s\s+)?(?:very\s+)?")
_OF_THE_WHOLE = (r"(?:\s+(?:of|in)\s+(?:your|the|this|my)\s+(?:(?:entire|whole)\s+)?(?!paragraph|"
                 r"stanza|verse|section|chapter|part|bullet)[\w-]+)?")
_IS = (r"\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall|is\s+to|ought\s+to)\s+)?(?:be|is|"
       r"read|reads|say|says|go)(?:\s+(?:exactly|as\s+follows|verbatim|word\s+for\s+word))?\s*"
       r"(?:[:,]\s*)?")
# "the last word should be the word 'sunset'"
_NAMED = r"(?:(?:the|this)\s+(?:exact\s+)?(?:word|phrase|sentence|line)\s*:?\s*)?"
# the same, before a phrase with no quotes: only after a colon or "exactly"
_IS_BARE = (r"\s+(?:(?:must|should|has\s+to|needs\s+to|will|shall|is\s+to|ought\s+to)\s+)?"
            r"(?:be|is|read|reads|say|says|go)(?:\s+(?:exactly|as\s+follows|verbatim|word\s+for\s+"
            r"word)\s*:?|\s*:)\s*")
# a phrase: quoted, or after a colon up to the sentence's end
_QUOTED_PHRASE = rf"(?P<phrase>{QUOTE_ITEM})"
_BARE_PHRASE = (r"(?![\s\"“'‘「])(?P<bare>[^\n\"“]{1,100}?(?:[!?](?=[\s.\"”]|$)|\.(?=\s|$)|"
                r"(?=\s*\n)|$))")
_AND_NOTHING_ELSE = re.compile(r"[\s,]*(?:and|with)\s+nothing\s+(?:else|more|after\s+it)"
                               r"(?:\s+after\s+it)?[.!]?$", re.I)
# Chinese
_ZH_Q = (r"(?P<phrase>[“\"「『‘'][^”\"」』’'\n]{1,80}[”\"」』’'])")
# between 以 and the phrase, and after it: "以一句“晚安”结束", "用“未完待续”四个字收尾"
_ZH_ONE = r"(?:一句话?|这句话?|这样一句话?)\s*"
_ZH_WHAT = r"(?:[一二两三四五六七八九十\d]*个?字|一词|一句话?|这句话|这几个字|几个字|等字)"
_ZH_MUST = r"(?:必须|要|需要|需|请|应|应该|务必|一定要|得)?"
# the last or first sentence named as a place: "作为最后一句", "作为开场白"
_ZH_LAST = r"(?:全文|文章|回答|回复|正文)?(?:的)?(?:最后一句话?|最后一行|结束语|结尾语|结语|结尾句)"
_ZH_FIRST = r"(?:全文|文章|回答|回复|正文)?(?:的)?(?:第一句话?|开头第一句话?|第一行|开场白|开头语)"
# a phrase after a colon with no quotes, up to its sentence's end: "最后一句必须是：明天会更好。"
_ZH_BARE = r"(?P<bare>[^\n“\"「‘'\s][^\n“\"「]{0,59}?(?:[。！？](?![”」])|(?=\n)|$))"
# a passive verb of ending or opening: "is to be ended with", "should be opened with"
_BE = r"(?:(?:should|must|is\s+to|are\s+to|has\s+to|needs\s+to|will|shall|to)\s+)?be\s+"


# a text of the user's, already written, as the subject: "My toast already ends with ..."
_OWN_TEXT = re.compile(r"(?:^|[.!?;]\s*|\b(?:and|but)\s+)(?:my|our)\s+(?:[\w'-]+\s+){1,2}?"
                       r"(?:already\s+|always\s+|currently\s+|now\s+)?$", re.I)


# a bare "phrase" that describes the line instead of giving its words: "the final line should be
# exactly five words long.", "... should be a question."
_DESCRIBED = re.compile(
    rf"(?:(?:about|around|at\s+(?:least|most)|no\s+more\s+than|under|over)\s+)?"
    rf"(?:\d+|{EN_NUMBER})\s+(?:words?|syllables?|characters?|letters?)(?:\s+long)?[.!]?|"
    r"an?\s+question[.!]?", re.I)


# quotation marks named alone, not around a phrase: in "begin with " and finish with "", the
# words between two marks each set off by spaces are the request's own
_MARKS_ALONE = re.compile(r"[\"“”'‘’]\s.*\s[\"“”'‘’]", re.S)


def _edge(kind: str) -> Build:
    """The phrase, quotes removed; a bare phrase without "and nothing else"."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        before = max(0, m.start() - 80)
        if _ABOUT.search(m.string, before, m.start()) \
                or _PART_SUBJECT.search(m.string, before, m.start()) \
                or re.match(r"\w+s\b", m.group(0)) and _OWN_TEXT.search(m.string, before,
                                                                     m.start()) \
                or re.match(r"(?:its|their)\s", m.group(0), re.I) \
                and _ITS_PART.search(m.string, before, m.start()):
            return []
        groups = m.groupdict()
        if groups.get("phrase") and _MARKS_ALONE.fullmatch(groups["phrase"]):
            return []
        if groups.get("phrase"):
            phrase = (quoted_words(groups["phrase"]) or [groups["phrase"]])[0].strip()
        else:
            bare = (groups.get("bare") or "").strip()
            phrase = _AND_NOTHING_ELSE.sub("", bare).strip()
            if phrase != bare:  # "... and nothing else." took the sentence's full stop
                phrase = phrase.rstrip(",")
            if _DESCRIBED.fullmatch(phrase):
                return []
        return [(kind, {"phrase": phrase})] if phrase else []
    return build


_PHRASINGS: tuple[Phrasing, ...] = (
    # "end your reply with the exact sentence "..."", "finish with the line '...'"
    Phrasing(
        rf"\b{_END_VERBS}\s+{_PARTICLE}{_OBJECT}{_PARTICLE}{_WITH}{_QUOTED_PHRASE}",
        _edge("ends_with"),
        kind="ends_with", example='end with "Bye."', counter="end with a question."),
    Phrasing(
        rf"\b{_START_VERBS}\s+{_OBJECT}{_PARTICLE}{_WITH}{_QUOTED_PHRASE}", _edge("starts_with"),
        kind="starts_with", example='Start with "See you soon".',
        counter='ending with "See you soon"'),
    # the passive: "The speech is to be ended with the words '...'"
    Phrasing(
        rf"\b{_BE}(?:ended|finished|concluded|closed|wrapped\s+up|signed\s+off|rounded\s+off|"
        rf"capped\s+off)\s+{_WITH}{_QUOTED_PHRASE}", _edge("ends_with"),
        kind="ends_with",
        example='The toast should be closed with the words "To the happy couple!"',
        counter='The toast should be closed with the words "To the happy couple!'),
    Phrasing(
        rf"\b{_BE}(?:started|begun|opened|commenced|kicked\s+off)\s+{_WITH}{_QUOTED_PHRASE}",
        _edge("starts_with"),
        kind="starts_with", example="The story should be started with 'Once upon a time'.",
        counter="Start with 'Once upon a time'."),
    # the phrase as the subject: "'See you soon' should be the last line"
    Phrasing(
        rf"{_QUOTED_PHRASE}\s+(?:should|must|has\s+to|needs\s+to|will|is\s+to)\s+be\s+(?:the|your)"
        rf"\s+"
        rf"(?:very\s+)?(?:last|final|closing|concluding)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}\b",
        _edge("ends_with"),
        kind="ends_with", example="'That's all for today.' must be the final sentence.",
        counter="That's all for today."),
    Phrasing(
        rf"{_QUOTED_PHRASE}\s+(?:should|must|has\s+to|needs\s+to|will|is\s+to)\s+be\s+(?:the|your)"
        rf"\s+"
        rf"(?:very\s+)?(?:first|opening)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}\b", _edge("starts_with"),
        kind="starts_with", example='"Dear team" should be the first line of your email.',
        counter='"Dear team" should be the first choice.'),
    # "Make 'Goodnight, moon.' the final sentence"
    Phrasing(
        rf"\bmake\s+{_QUOTED_PHRASE}\s+(?:the|your)\s+(?:very\s+)?(?:last|final|closing"
        rf"|concluding)\s+"
        rf"{_EDGE_NOUN}{_OF_THE_WHOLE}\b", _edge("ends_with"),
        kind="ends_with", example="Make 'Goodnight, moon.' the final sentence.",
        counter="' the final sentence."),
    Phrasing(
        rf"\bmake\s+{_QUOTED_PHRASE}\s+(?:the|your)\s+(?:very\s+)?(?:first|opening)\s+{_EDGE_NOUN}"
        rf"{_OF_THE_WHOLE}\b", _edge("starts_with"),
        kind="starts_with", example="Make 'Once upon a time' the opening words of the story.",
        counter="Make 'Once upon a time' the title of the story."),
    # "Sign it 'Best, Jordan'"
    Phrasing(
        rf"\bsign\s+(?:it|the\s+\w+|your\s+\w+)\s+(?:as\s+)?{_QUOTED_PHRASE}", _edge("ends_with"),
        kind="ends_with", example="Sign it 'Best, Jordan'.", counter="Best, Jordan"),
    # unquoted after a colon or "the exact phrase": "End it with the exact line: ..."
    Phrasing(
        rf"\b{_END_VERBS}\s+{_OBJECT}{_PARTICLE}{_WITH_BARE}{_BARE_PHRASE}", _edge("ends_with"),
        kind="ends_with", example="Close with this line exactly: Thanks, Priya",
        counter='Close the response with "Thanks again!'),
    Phrasing(
        rf"\b{_START_VERBS}\s+{_OBJECT}{_PARTICLE}{_WITH_BARE}{_BARE_PHRASE}", _edge("starts_with"),
        kind="starts_with",
        example="Begin your reply with the exact phrase: Good morning, everyone.",
        counter="Begin your reply with a warm greeting."),
    # "the last line must be "..."", "its final line should read exactly: ..."
    Phrasing(
        rf"\b{_OWNER}(?:last|final|closing|ending|concluding)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}{_IS}"
        rf"{_NAMED}{_QUOTED_PHRASE}", _edge("ends_with"),
        kind="ends_with", example='Your last words must be "See you soon"',
        counter='Your last words must be "See you soon.'),
    Phrasing(
        rf"\b{_OWNER}(?:last|final|closing|ending|concluding)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}"
        rf"{_IS_BARE}{_BARE_PHRASE}", _edge("ends_with"),
        kind="ends_with", example="Make sure the final sentence reads: Thank you for reading.",
        counter="Please make sure your closing sentence is 'Thank you for reading."),
    Phrasing(
        rf"\bmake\s+(?:the\s+|its\s+|your\s+)?(?:very\s+)?(?:last|final|closing)\s+{_EDGE_NOUN}"
        rf"{_OF_THE_WHOLE}\s*(?::|be)?\s*{_QUOTED_PHRASE}", _edge("ends_with"),
        kind="ends_with", example='Make the last sentence "We ride at dawn."',
        counter='Make the last sentence "We ride at dawn.'),
    Phrasing(
        rf"\b{_OWNER}(?:first|opening)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}{_IS}{_NAMED}{_QUOTED_PHRASE}",
        _edge("starts_with"),
        kind="starts_with", example='opening line has to be "Listen up."',
        counter="opening line has to be short."),
    # "put 'Grab yours today!' as the last line", "use 'Hello' as the opening words"
    Phrasing(
        rf"\b(?:put|place|have|use|add|write)\s+{_QUOTED_PHRASE}\s+(?:as|for)\s+(?:the\s+|your\s+)?"
        rf"(?:very\s+)?(?:last|final|closing|concluding)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}\b",
        _edge("ends_with"),
        kind="ends_with",
        example="Write a thank-you card and put 'With love, Ana' as the last line.",
        counter='Write a poem about the ocean. The last line must be "and the tide came home."'),
    Phrasing(
        rf"\b(?:put|place|have|use|add|write)\s+{_QUOTED_PHRASE}\s+(?:as|for)\s+(?:the\s+|your\s+)?"
        rf"(?:very\s+)?(?:first|opening)\s+{_EDGE_NOUN}{_OF_THE_WHOLE}\b", _edge("starts_with"),
        kind="starts_with", example="Use 'Hello there' as the opening line.",
        counter="Use 'Hello there' as the title."),
    Phrasing(
        rf"\bmake\s+(?:the\s+|its\s+|your\s+)?(?:very\s+)?(?:first|opening)\s+{_EDGE_NOUN}"
        rf"{_OF_THE_WHOLE}\s*(?::|be)?\s*{_QUOTED_PHRASE}", _edge("starts_with"),
        kind="starts_with", example="Make the first line: 'Breaking news'.",
        counter="Make the first line short."),
    # a labelled line: "Last line: 'Stay safe out there.'", "Sign-off: 'Cheers, Tom'"
    Phrasing(
        rf"(?:^|(?<=[.;\n]))\s*(?:[-*•]\s*)?(?:(?:last|final|closing|ending)\s+{_EDGE_NOUN}|"
        rf"sign[\s-]?off|ending|closing|closer|final\s+words)\s*[:：]\s*{_QUOTED_PHRASE}",
        _edge("ends_with"),
        kind="ends_with", example='Ending: "See you on Saturday!"',
        counter='Ending: "See you on Saturday!'),
    Phrasing(
        rf"(?:^|(?<=[.;\n]))\s*(?:[-*•]\s*)?(?:first|opening)\s+{_EDGE_NOUN}\s*[:：]\s*"
        rf"{_QUOTED_PHRASE}", _edge("starts_with"),
        kind="starts_with", example='Opening line: "It was a dark and stormy night."',
        counter='Closing line: "It was a dark and stormy night."'),
    # Chinese: "以“…”结尾", "结尾必须是“…”", "最后一句话请写“…”", "用“…”开头"
    Phrasing(
        rf"(?:以|用)\s*(?:{_ZH_ONE})?{_ZH_Q}\s*{_ZH_WHAT}?\s*(?:作为|作|来|当作|当做)?(?:结尾|结束|"
        rf"收尾|收束|落款|{_ZH_LAST})", _edge("ends_with"),
        kind="ends_with", example="以一句“晚安”结束。",
        counter="写一段关于月亮的文字，50字左右，结尾必须是“晚安。"),
    # (a verb is needed: "结语：……" alone is a pasted text's section)
    Phrasing(
        rf"{_ZH_LAST}{_ZH_MUST}(?:是|为|写|写成)\s*[：:]\s*{_ZH_BARE}", _edge("ends_with"),
        kind="ends_with", example="全文最后一句话请写成：下次见。",
        counter="最后一句话请写“我们下次见”。"),
    Phrasing(
        rf"(?:结尾|末尾|文末|最后)(?:处)?{_ZH_MUST}(?:写上|写|加上|附上)\s*[：:]\s*{_ZH_BARE}",
        _edge("ends_with"),
        kind="ends_with", example="结尾要写：祝好。", counter="Email 结尾请写 'Thanks, Amy'。"),
    Phrasing(
        rf"{_ZH_FIRST}{_ZH_MUST}(?:是|为|写|写成)\s*[：:]\s*{_ZH_BARE}", _edge("starts_with"),
        kind="starts_with", example="开头第一句必须是：各位好。",
        counter="开头第一句必须是“从前有座山”。"),
    # "结尾加上 #hiring": a hashtag or Latin words with no quotes, up to the clause's end
    Phrasing(
        r"(?:结尾|末尾|文末|最后)(?:处)?(?:请)?(?:加上|写上|附上|带上)\s*"
        r"(?P<bare>(?!P\.)[#@]?[A-Za-z][^，。；！？\n\"“”]{0,40}?)(?=\s*[，。；！？\n]|$)",
        _edge("ends_with"),
        kind="ends_with", example="帮我写个 LinkedIn post，结尾加上 #hiring。",
        counter="帮我写个 caption，全部 lowercase。"),
    Phrasing(
        rf"(?:结尾|末尾|文末|最后|结束时|结尾处)(?:的)?(?:一句话?|一行|一段的最后一句)?{_ZH_MUST}"
        rf"(?:写上|加上|写|是|为|以|用)\s*[:：]?\s*{_ZH_Q}", _edge("ends_with"),
        kind="ends_with", example="结尾必须是“谢谢阅读”。", counter='结尾必须是 "See you soon!'),
    Phrasing(
        rf"(?:以|用)\s*(?:{_ZH_ONE})?{_ZH_Q}\s*{_ZH_WHAT}?\s*(?:作为|作|来|当作|当做)?(?:开头|开始|"
        rf"开篇|起笔|{_ZH_FIRST})", _edge("starts_with"),
        kind="starts_with", example="以“亲爱的朋友们”开头。", counter="开头请用“亲爱的同学们”。"),
    Phrasing(
        rf"(?:开头|开篇|第一句话?|开头第一句话?|开头的第一句话?){_ZH_MUST}(?:写上|写|是|为|以|用)"
        rf"\s*[:：]?\s*{_ZH_Q}", _edge("starts_with"),
        kind="starts_with", example="开篇用“很久很久以前”。",
        counter="以“很久很久以前”开头，写一个关于小狐狸的童话故事，300字左右，故事的标题写在<<>>里"
                "。"),
)

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
