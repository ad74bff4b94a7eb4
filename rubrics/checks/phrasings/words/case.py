"""The ways a request states the case of its response: all lowercase ("no capital letters at
all", "entirely in lowercase", "every letter small", "Case: lower", "全部使用小写"), all capitals
("in ALL CAPS", "your entire answer should be in capital letters", "respond in uppercase only",
"Case: upper throughout", "every letter of the response is to be written as a capital",
"block capitals from the first word to the last", "全部使用大写字母"), and how many
words must be written in capitals ("at least 5 words in ALL CAPS", "use all caps for at least
8 words", "the number of all-caps words must be less than 5", "全大写的单词至少出现3次").

Case named as a topic ("the difference between uppercase and lowercase letters"), or asked of
one part only ("write the title in all caps"), is not the response's case."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.numbers import EN_NUMBER, ZH_NUMBER, to_int
from rubrics.checks.phrasings.shared import (
    QUALIFIER_EN,
    TIMES_EN,
    ZH_AT_LEAST,
    ZH_AT_MOST,
    ZH_LESS_THAN,
    ZH_MORE_THAN,
    ZH_START,
    Build,
    Matcher,
    Phrasing,
    Table,
    count,
    rules_of,
    times,
    times_relation,
    zh_relation_of,
)

_I = re.I | re.S
# a check of the key's kind read from words inside a longer check of one of the listed kinds
# is a misreading: the "in all capital letters" of "use words in all capital letters at least
# 2 times" asks for capitalised words, not a response all in capitals
PART_OF = {"uppercase": frozenset({"capital_word_count"})}
_CAPS = (r"(?:capital(?:ized)?\s+(?:letters|characters)|capitals|caps|upper[\s-]*case(?:\s+"
         r"(?:letters|characters))?|"
         r"block\s+(?:capitals|letters))")
_LOWER = r"(?:lower[\s-]*case(?:\s+(?:letters|characters))?|small\s+letters)"
# a case set against the other is a topic: "uppercase and lowercase letters"
_NOT_CONTRASTED = r"(?!\s*(?:and|or|vs\.?|versus|/)\s+(?:\w+\s+)?(?:upper|lower|capital|small))"
_ADVERBS = r"(?:(?:only|all|entirely|completely|fully|wholly|strictly|just|exclusively)\s+)*"
# the response as a subject: "your entire answer", "the whole reply", "everything"
_RESPONSE = (r"(?:(?:your|the)\s+(?:(?:entire|whole|full|complete)\s+)?(?:response|answer|reply|"
             r"output|text|message)|everything(?:\s+you\s+write)?|(?:the\s+)?(?:whole|entire)\s+"
             r"thing)")
_BE = (r"(?:(?:should|must|shall|will|has\s+to|needs?\s+to|is\s+to)\s+(?:only\s+)?be|is|be)\s+"
       r"(?:(?:written|typed|composed|formatted)\s+)?")
# a part the case is asked of instead of the whole: "the title in all caps"
_A_PART = re.compile(
    r"\b(?:title|heading|headline|header|names?|first\s+(?:letter|word)|initials?|acronyms?|"
    r"abbreviations?|labels?|keywords?|key\s+(?:words|terms)|brand|subject\s+line|"
    r"section\s+(?:names|titles))\b[^.,;:!?\n]{0,20}$|\b(?:some|a\s+few|few|several|many|"
    r"certain|key|important|\d+|\w+-\w+)\s+(?:\w+\s+)?words?\s+(?:in|with|using)\s+$", re.I)
# after the case, a part it is asked of: "use lowercase for the hashtags"
_FOR_A_PART = re.compile(r"\s+(?:for|on|in)\s+(?:the|all|any|each|every)\s+(?!(?:entire|whole)\b|"
                         r"(?:response|answer|reply|text|output)\b)\w+", re.I)
# letters of a case refused: "without a single capital", "don't use any lowercase letters"
_WITHOUT = r"without(?:\s+using)?(?:\s+(?:any|a\s+single|one))?|not\s+(?:a\s+single|one|any)"
_REFUSED = (r"(?:do\s+not|don['’]?t|must\s+not|should\s+not|never|cannot|can['’]?t)\s+"
            r"(?:use|include|contain|have)")
_ZH_WHOLE = r"(?:全部|全文|通篇|全|都|一律|只|仅|均|完全|统一)"
# the whole named by its ends: "from start to finish" (not "throughout", which a count of
# capitalised words says too: "two words in uppercase throughout")
_END_TO_END = (r"from\s+(?:the\s+)?(?:start|beginning|first\s+word|top)\s+to\s+(?:the\s+)?"
               r"(?:finish|end|last(?:\s+word)?|bottom)\b")


# after the case, a noun it qualifies: "brands that went with lowercase logos", "an
# all-caps look" (a style named, not the response's case)
_OF_A_THING = re.compile(r"\s+(?:logos?|brand(?:s|ing)?|names?|looks?|styles?|aesthetics?|"
                         r"fonts?|typefaces?|trends?|usernames?|handles?|signs?|branding)\b",
                         re.I)


# capitals refused right before a rule's words: a style refused, no case asked ("Don't write it
# in all caps like last time")
_REFUSED_BEFORE = re.compile(r"\b(?:don['’]?t|do\s+not|never|please\s+don['’]?t|shouldn['’]?t|"
                             r"must\s+not|avoid)\s+(?!(?:forget|fail|hesitate|skimp)\b)"
                             r"(?:[\w'’]+\s+){0,4}?$", re.I)


def _whole(kind: str) -> Build:
    """The case of the whole response; not when the clause before names a part, nor when the
    case qualifies a thing, nor all capitals refused."""
    def build(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
        start = max(m.string.rfind(s, 0, m.start()) for s in ".,;:!?\n")
        if _A_PART.search(m.string, start + 1, m.start()) or _FOR_A_PART.match(m.string, m.end()) \
                or _OF_A_THING.match(m.string, m.end()):
            return []
        if kind == "uppercase" and _REFUSED_BEFORE.search(m.string, start + 1, m.start()):
            return []
        return [(kind, {})]
    return build


def _capital_words(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """How many words written all in capitals the response must have."""
    groups = m.groupdict()
    n = times(m) if groups.get("t") else to_int(groups["n"]) if groups.get("n") else None
    if groups.get("upper"):
        low = to_int(groups.get("low") or groups["n"])
        return count("capital_word_count", "between", low, to_int(groups["upper"]))
    qualifier = groups.get("q") or ""
    relation = zh_relation_of(qualifier) if re.search(r"[\u4e00-\u9fff]", qualifier) \
        else times_relation(m)
    return count("capital_word_count", relation, n)


_QN = (rf"\b(?:(?:between\s+)?(?P<low>{EN_NUMBER})\s*(?:-|–|to|and|or)\s*(?P<upper>{EN_NUMBER})|"
       rf"(?:(?P<q>{QUALIFIER_EN})\s*)?(?P<n>{EN_NUMBER})(?:\s+(?P<post>or\s+(?:more|fewer|"
       r"less)|at\s+(?:least|most)|max(?:imum)?|min(?:imum)?))?)")
_ZH_Q = rf"(?P<q>{ZH_AT_LEAST}|{ZH_AT_MOST}|{ZH_MORE_THAN}|{ZH_LESS_THAN})?"
_ZH_CAPS_WORD = r"(?:全(?:部)?大写|大写|all[\s-]*caps)\s*(?:的)?(?:英文)?(?:单词|词)"
_ALL_CAPS_ADJ = (r"(?:all[\s-]*caps?|all[\s-]*capitals?|all[\s-]*capital(?:ized)?|"
                 r"fully[\s-]+capitali[sz]ed|capitali[sz]ed|upper[\s-]*case|full[\s-]+caps)")

# rules that open with an optional count run only near a word of capitals
_CAPS_GATE = (r"capital|caps|upper|block\s", (120, 60))

# every letter as the subject of a case rule: "Every letter of your reply should be ..."
_EVERY_LETTER = (r"\b(?:every|each|all(?:\s+the)?)\s+(?:single\s+)?(?:letters?|characters?)"
                 r"(?:\s+(?:of|in)\s+(?:your|the)\s+(?:\w+\s+)?(?:reply|response|answer|text|"
                 r"output))?")
_EVERY_LETTER_IS = (rf"{_EVERY_LETTER}\s+(?:(?:should|must|has\s+to|needs\s+to|is\s+to|will|"
                    r"shall)\s+)?(?:be|is|are)\s+(?:(?:written|typed|set|rendered)\s+)?"
                    r"(?:in|as)?\s*")


_PHRASINGS: tuple[Phrasing, ...] = (
    # all lowercase
    Phrasing(
        rf"\b(?:in|using|with|use|write|written|type|typed|keep\s+it|be|reply|respond|answer)\s+"
        rf"{_ADVERBS}(?:in\s+)?(?:all\s+)?{_LOWER}{_NOT_CONTRASTED}", _whole("lowercase"),
        kind="lowercase", example="all in lowercase", counter="all lowercase"),
    Phrasing(
        rf"\ball[\s-]+{_LOWER}{_NOT_CONTRASTED}|\b{_LOWER}\s+only\b|\bentirely\s+(?:in\s+)?{_LOWER}"
        rf"|\bonly\s+{_LOWER}{_NOT_CONTRASTED}", _whole("lowercase"),
        kind="lowercase", example="all lowercase", counter="all in lowercase"),
    Phrasing(
        rf"\b(?:no|zero|{_WITHOUT}|{_REFUSED}\s+(?:any\s+)?)\s*(?:capital\s+letters?|capitals|"
        r"caps(?!\s+lock)|capitali[sz]ation|upper[\s-]*case\s+letters?|capital\s+letter)\b|\b(?:do\s+not|don['’]?t|"
        r"never)\s+capitali[sz]e\s+(?:anything|any\s+(?:words?|letters?))\b", _whole("lowercase"),
        kind="lowercase", example="dont use any capital letters",
        counter="Don't use any lowercase letters."),
    Phrasing(
        rf"{_ZH_WHOLE}\s*(?:使用|用|采用|以|为|是)?\s*(?:英文)?(?:(?<!大)小写(?:字母|英文)?|"
        r"lower[\s-]*case\b)|(?:使用|用|采用)(?:英文)?(?<!大)小写(?:字母)?(?:书写|回答|写|回复"
        r"|作答)|"
        r"(?:不要|不能|不得|禁止|避免|不许)(?:使用|出现|用|有)?(?:任何)?大写(?:字母)?(?!的?"
        r"(?:英文)?(?:单词|词))",
        _whole("lowercase"),
        kind="lowercase", example="全部小写。", counter="Reply 全部大写 please。"),
    Phrasing(
        rf"\b{_RESPONSE}\s+{_BE}{_ADVERBS}(?:in\s+)?(?:all\s+)?{_LOWER}{_NOT_CONTRASTED}",
        _whole("lowercase"),
        kind="lowercase", example="The response must be in lowercase letters only.",
        counter="The response must be entirely in uppercase letters."),
    # "keep all letters lowercase", "keep every single letter lowercase", "make everything
    # uppercase"
    Phrasing(
        rf"\b(?:keep|make|have|set|put)\s+(?:all\s+(?:of\s+)?(?:the\s+)?(?:letters|words|text"
        rf"|characters)|"
        r"(?:every|each)\s+(?:single\s+)?(?:letter|word|character)|everything|it\s+all|"
        rf"the\s+(?:whole\s+|entire\s+)?(?:text|response|answer|reply|thing))\s+(?:in\s+)?"
        rf"(?:all\s+)?{_LOWER}"
        rf"{_NOT_CONTRASTED}", _whole("lowercase"),
        kind="lowercase", example="Keep all letters lowercase.", counter="all lowercase"),
    Phrasing(
        rf"\b(?:keep|make|have|set|put)\s+(?:all\s+(?:the\s+)?(?:letters|words|text)|everything"
        rf"|it\s+all|"
        r"(?:every|each)\s+(?:single\s+)?(?:letter|word|character)|"
        rf"the\s+(?:whole\s+|entire\s+)?(?:text|response|answer|reply|thing))\s+(?:in\s+)?"
        rf"(?:all\s+)?(?:caps|capitals|upper[\s-]*case|capital\s+letters){_NOT_CONTRASTED}",
        _whole("uppercase"),
        kind="uppercase", example="Put every word in uppercase.",
        counter="Put every word in lowercase."),
    # every letter as the subject: "Every letter of your reply should be lowercase", "Every
    # letter must be a capital"; "no lowercase letters at all"
    Phrasing(
        rf"{_EVERY_LETTER_IS}(?:all\s+)?{_LOWER}{_NOT_CONTRASTED}",
        _whole("lowercase"),
        kind="lowercase", example="Every letter must be lowercase; no capital letters at all.",
        counter="Every letter must be a capital; no lowercase letters at all."),
    # the verb left unsaid, the case closing the clause: "..., every letter small: ..."
    Phrasing(
        rf"{_EVERY_LETTER}\s+(?:small|{_LOWER})(?=\s*(?:[.,;:!?\n—–]|$))", _whole("lowercase"),
        kind="lowercase", example="Write it casually, every letter small: a note to my cat.",
        counter="Write it casually, every letter small and neat, by hand."),
    Phrasing(
        rf"{_EVERY_LETTER_IS}(?:a\s+capital|capitals|(?:all\s+)?caps"
        rf"|upper[\s-]*case){_NOT_CONTRASTED}"
        r"|\bno\s+lower[\s-]*case\s+letters?\b",
        _whole("uppercase"),
        kind="uppercase", example="Every letter must be a capital; no lowercase letters at all.",
        counter="Every letter must be lowercase; no capital letters at all."),
    # "Don't use any lowercase letters", "Without a single lowercase letter"
    Phrasing(
        rf"\b(?:{_WITHOUT}|{_REFUSED}\s+(?:any\s+|a\s+single\s+)?)\s*(?:lower[\s-]*case|small)\s+"
        r"letters?\b",
        _whole("uppercase"),
        kind="uppercase", example="Don't use any lowercase letters.",
        counter="Don't use any capital letters."),
    # a labelled case: "Case: lowercase throughout", "Capitalization: all caps"
    Phrasing(
        rf"(?:^|(?<=[.;,\n]))\s*(?:[-*•]\s*)?(?:letter\s+)?(?:case|casing|capitali[sz]ation)"
        rf"\s*[:：]\s*"
        rf"(?:all\s+)?(?:{_LOWER}|lower\b)", _whole("lowercase"),
        kind="lowercase", example="Casing: lowercase.", counter="Casing: mixed."),
    Phrasing(
        r"(?:^|(?<=[.;,\n]))\s*(?:[-*•]\s*)?(?:letter\s+)?(?:case|casing|capitali[sz]ation)"
        r"\s*[:：]\s*"
        r"(?:all\s+caps|all\s+capitals|(?:all\s+)?upper(?:[\s-]*case)?\b)", _whole("uppercase"),
        kind="uppercase", example="Case: upper throughout.", counter="Case: lowercase."),
    # a terse sentence of its own: "Haiku. Lowercase. No commas."
    Phrasing(
        r"(?:^|(?<=[.!?;]\s)|(?<=\n))(?:all\s+)?lower[\s-]*case(?:\s+only)?\s*(?=[.!;\n]|$)",
        _whole("lowercase"),
        kind="lowercase", example="lowercase", counter="• all lowercase"),
    Phrasing(
        r"(?:^|(?<=[.!?;]\s)|(?<=\n))(?:all\s+caps|all\s+capitals|upper[\s-]*case(?:\s+only)?)\s*"
        r"(?=[.!;\n]|$)", _whole("uppercase"),
        kind="uppercase", example="uppercase", counter="all in uppercase"),
    # the case said to hold from end to end: "needs to be uppercase from start to finish"
    Phrasing(
        rf"\b{_LOWER}\s+{_END_TO_END}", _whole("lowercase"),
        kind="lowercase", example="The text you write must be lowercase from start to finish.",
        counter="The text you write must be uppercase from start to finish."),
    Phrasing(
        rf"\b(?:all\s+)?{_CAPS}\s+{_END_TO_END}", _whole("uppercase"),
        kind="uppercase", example="The text you write must be uppercase from start to finish.",
        counter="The text you write must be lowercase from start to finish."),
    # all capitals
    Phrasing(
        rf"\b{_RESPONSE}\s+{_BE}{_ADVERBS}(?:all\s+)?(?:caps|capitals|upper[\s-]*case)"
        rf"{_NOT_CONTRASTED}", _whole("uppercase"),
        kind="uppercase", example="The reply should be all uppercase, with not one small letter.",
        counter="The reply should be all lowercase, with not one capital letter."),
    # (the verb may go unsaid after "the whole thing": "WHOLE THING IN CAPS")
    Phrasing(
        rf"(?:\b{_RESPONSE}\s+{_BE}(?:in\s+\w+,?\s+(?:and\s+)?)?|\b(?:the\s+)?(?:whole|entire)\s+"
        rf"thing\s+){_ADVERBS}(?:in|using|with)\s+"
        rf"(?:all\s+)?{_CAPS}{_NOT_CONTRASTED}", _whole("uppercase"),
        kind="uppercase", example="Your entire answer should be in capital letters.",
        counter="Your entire response should be in English, capital letters only."),
    Phrasing(
        rf"\b(?:write|writing|respond|answer|reply|type|shout|render(?:ed)?)\s+(?:(?:it|everything|all\s+of\s+it"
        rf"|the\s+"
        rf"whole\s+thing|your\s+(?:entire\s+|whole\s+)?(?:response|answer|reply))\s+)?{_ADVERBS}"
        rf"(?:in|using)\s+(?:all\s+)?{_CAPS}{_NOT_CONTRASTED}", _whole("uppercase"),
        kind="uppercase", example="Write it in capitals.", counter="Write it in all"),
    Phrasing(
        rf"(?<!with )\ball\s+(?:in\s+)?{_CAPS}{_NOT_CONTRASTED}|\b{_CAPS}\s+only\b|\bonly\s+"
        rf"{_CAPS}{_NOT_CONTRASTED}|\bentirely\s+in\s+(?:english\s+)?(?:capital|uppercase)\s+"
        r"letters\b|\band\s+in\s+(?:all\s+)?(?:capital\s+letters|uppercase(?:\s+letters)?)\b",
        _whole("uppercase"),
        kind="uppercase", example="in all caps", counter="all in lowercase"),
    # caps lock named: "with caps lock on for the whole thing", "caps lock on, please"
    Phrasing(
        r"\b(?:with\s+(?:the\s+)?|keep\s+(?:the\s+)?)?caps[\s-]*lock\s+(?:on|turned\s+on|engaged|"
        r"down)\b", _whole("uppercase"),
        kind="uppercase", example="Reply with caps lock on for the whole thing.",
        counter="Reply with caps lock off."),
    Phrasing(
        rf"{_ZH_WHOLE}(?:使用|用|采用|以|为|是)?(?:英文)?大写(?:字母|英文)?(?!的?(?:英文)?(?:单词"
        rf"|词))",
        _whole("uppercase"),
        kind="uppercase", example="请全部使用大写字母回答。", counter="回答请全部使用英文。"),
    # how many words in capitals
    Phrasing(
        rf"\b{_QN}\s+(?:\w+\s+){{0,2}}?words?\s+(?:(?:that|which)\s+(?:are|is)\s+)?(?:(?:should"
        rf"|must|"
        r"need\s+to|needs\s+to|have\s+to|has\s+to|to|will|may|can|shall|might|could)\s+(?:be\s+)?|"
        r"(?:are|is)\s+)?(?:(?:written|typed|put|set|fully|entirely|completely|appear|show\s+up|"
        r"occur)\s+)*(?:(?:in|using|with)\s+(?:all[\s-]+|full[\s-]+)?"
        rf"{_CAPS}|capitali[sz]ed|upper[\s-]*cased)", _capital_words, *_CAPS_GATE,
        kind="capital_word_count", example="Put no fewer than 4 words in ALL CAPS.",
        counter="In no more than 4 words,"),
    # "with 5 or more fully capitalised words", "Stress at least 2 words by writing them in block
    # capitals"
    Phrasing(
        rf"\b(?P<n>{EN_NUMBER})(?P<post>\s+or\s+(?:more|fewer|less))\s+(?:\w+\s+)"
        rf"?{_ALL_CAPS_ADJ}\s+"
        r"words\b", _capital_words, *_CAPS_GATE,
        kind="capital_word_count", example="with 4 or more fully capitalised words",
        counter="Limit fully capitalised words to 4 or fewer."),
    Phrasing(
        rf"\b(?:stress|emphasi[sz]e|highlight|write|put|set|type|shout)\s+{_QN}\s+(?:\w+\s+)"
        rf"?words?\s+"
        rf"(?:by\s+(?:writing|putting|typing|setting)\s+them\s+)?(?:in|using)\s+(?:all[\s-]+"
        rf"|full[\s-]+)?"
        rf"{_CAPS}", _capital_words, *_CAPS_GATE,
        kind="capital_word_count", example="Put no fewer than 4 words in ALL CAPS.",
        counter="In no more than 4 words,"),
    # "some words in ALL CAPS — at least 3"
    Phrasing(
        rf"\bwords?\s+(?:(?:written|typed)\s+)?(?:in|with|using)\s+(?:all[\s-]+|full[\s-]+)"
        rf"?{_CAPS}\s*"
        rf"(?:[,;—–]|\s-\s)\s*{_QN}\b(?!\s*(?:words?\s+)?(?:long|each))", _capital_words,
        kind="capital_word_count", example="Write some words in ALL CAPS — at least 3.",
        counter="Write at least 3 words entirely in uppercase letters."),
    # "ALL-CAPS words: between 2 and 5", "capitalize every letter of at least two words"
    Phrasing(
        rf"\b{_ALL_CAPS_ADJ}\s+words\s*[:：]\s*(?:between\s+)?(?P<n>{EN_NUMBER})\s*(?:and|-|–|to)"
        rf"\s*"
        rf"(?P<upper>{EN_NUMBER})", _capital_words,
        kind="capital_word_count", example="ALL-CAPS words: between 2 and 5.",
        counter="Between 3 and 5 words should appear in all caps."),
    Phrasing(
        rf"\b{_ALL_CAPS_ADJ}\s+words\s*[:：]\s*{_QN}", _capital_words,
        kind="capital_word_count", example="ALL-CAPS words: between 2 and 5.",
        counter="Between 3 and 5 words should appear in all caps."),
    Phrasing(
        rf"\b(?:limit|cap|restrict|keep)\s+(?:the\s+(?:number|count)\s+of\s+)"
        rf"?{_ALL_CAPS_ADJ}\s+words\s+"
        rf"(?:to|at)\s+(?:just\s+|only\s+)?(?P<n>{EN_NUMBER})(?:\s+at\s+most)?\b",
        lambda m: count("capital_word_count", "at most", to_int(m.group("n"))),
        kind="capital_word_count", example="Limit all-caps words to 2 at most.",
        counter="at most 4 all-caps words"),
    Phrasing(
        rf"\bcapitali[sz]e\s+(?:every\s+letter\s+(?:of|in)\s+|(?:fully|entirely)\s+)?{_QN}\s+"
        r"(?:\w+\s+)?words\b", _capital_words,
        kind="capital_word_count", example="Capitalize at least two words for emphasis.",
        counter="Use at least two words written entirely in capitals for emphasis."),
    Phrasing(
        rf"\b(?:use|write\s+in|put\s+in|type\s+in)\s+(?:all[\s-]+|full[\s-]+)?(?:caps|capitals|"
        rf"capital\s+letters|uppercase)\s+(?:for|on)\s+{_QN}\s+(?:\w+\s+)?words\b", _capital_words,
        kind="capital_word_count", example="Use ALL CAPS for exactly 3 words.",
        counter="Use 3 words in all caps for emphasis."),
    Phrasing(
        rf"\bwords?\s+(?:(?:written|typed)\s+)?(?:in|with|using)\s+(?:all[\s-]+|full[\s-]+)?{_CAPS}"
        r"\s+(?:(?:should|must|need\s+to|needs\s+to|to|will)\s+)?(?:appear|occur|show\s+up|be\s+"
        rf"used|be\s+present|be\s+included)?\s*{TIMES_EN}", _capital_words,
        kind="capital_word_count", example="Use words in all capital letters at least 2 times.",
        counter="Use at most 2 words in all capital letters."),
    Phrasing(
        rf"\b(?:number|count)\s+of\s+(?:words\s+(?:(?:written|typed)\s+)?(?:(?:entirely|fully|all)"
        rf"\s+)?"
        rf"(?:in|with|using)\s+(?:all[\s-]+)?{_CAPS}|"
        rf"{_ALL_CAPS_ADJ}\s+words)"
        r"\s+(?:(?:should|must|has\s+to|needs\s+to|is\s+to)\s+)?(?:be\s+|is\s+)?"
        rf"{_QN}\b", _capital_words,
        kind="capital_word_count", example="The number of all-caps words must be less than 5.",
        counter='The very first words of your reply must be "First of all".'),
    Phrasing(
        rf"(?:\b(?P<q>{QUALIFIER_EN})\s+)?\b(?P<n>{EN_NUMBER})\s+(?:\w+\s+)?{_ALL_CAPS_ADJ}\s+"
        r"words\b", _capital_words, *_CAPS_GATE,
        kind="capital_word_count", example="2 all-capital words", counter="All-caps words: max 2."),
    Phrasing(
        rf"{_ZH_CAPS_WORD}[^。；！？\n]{{0,8}}?{_ZH_Q}\s*(?:出现|使用|有)\s*(?P<n>{ZH_NUMBER})"
        rf"\s*次",
        _capital_words,
        kind="capital_word_count", example="全大写的单词至少出现3次。",
        counter="回答中至少要有3个全大写的英文单词。"),
    Phrasing(
        rf"{_ZH_CAPS_WORD}\s*(?:的)?(?:数量|个数)?\s*{_ZH_Q}\s*(?P<n>{ZH_NUMBER})\s*个",
        _capital_words,
        kind="capital_word_count", example="英文回答中全大写单词不超过两个。",
        counter="回答中至少要有3个全大写的英文单词。"),
    Phrasing(
        rf"\b(?P<q>{QUALIFIER_EN})\s+(?P<n>{EN_NUMBER})\s*个\s*{_ZH_CAPS_WORD}", _capital_words,
        kind="capital_word_count", example="要有 at most 2 个全大写的单词。",
        counter="回答中至少要有3个全大写的英文单词。"),
    Phrasing(
        rf"{ZH_START}{_ZH_Q}\s*(?:要|需|需要|应|必须)?(?:包含|使用|出现|有)?\s*(?P<n>{ZH_NUMBER})"
        rf"\s*个\s*"
        rf"{_ZH_CAPS_WORD}",
        _capital_words,
        kind="capital_word_count", example="回答中至少要有3个全大写的英文单词。",
        counter="英文回答中全大写单词不超过两个。"),
)

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
