"""The ways a request names the language the whole response must be in: "answer in German",
"your entire response should be in French", "the output language must be Japanese", "use
Portuguese for the whole thing", "(in Korean, please)", "write a short poem in French",
"The answer should be Spanish-language", "Don't answer in English, use Russian", "no English
please, Polish.", "Reference letter template in French, ...", "need a Chinese blurb",
"Summarize these notes in Chinese for the team", "Mandarin please: ...", "(Spanish please,
it's for my mom.)", "A welcome note for the volunteers should be composed in Finnish", "...,
in English of course, ...", "用德语回答", "回答必须全部使用英文", "以西班牙语作答". A language named
by the people the text is for is `languages.people`'s.

A language named as a topic ("why learning Spanish is useful"), a translation target
("translate it into Japanese", "a German translation of this note"), a question about a word
("what does it mean in German?") or an adjective ("in French schools", "a French toast
recipe") is not the response's language, nor is one a negation refuses ("Don't reply in
English"). The names and codes are `languages.names`'s; `asked_languages` gives what the rows
read, for the readings that depend on the response's language (a length in characters)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.language import NAMES
from rubrics.checks.numbers import EN_NUMBER
from rubrics.checks.phrasings.languages.names import (
    LANG_COUNTRY,
    LANG_EN,
    LANG_NATIVE,
    LANG_ZH,
    LANGUAGE_NAMES,
    ZH_LANGUAGE_NAMES,
    code_of,
)
from rubrics.checks.phrasings.languages.people import RULES as PEOPLE_RULES
from rubrics.checks.phrasings.shared import (
    Build,
    Matcher,
    Phrasing,
    Table,
    rules_of,
)

_I = re.I | re.S

# a register before the language's name: "in plain English", "in formal Japanese"
_REGISTER = (r"(?:(?:plain|simple|formal|informal|polite|casual|fluent|proper|standard|basic|easy|"
             r"modern|good|correct|clear|natural|everyday|colloquial)\s+)?")
# after the language's name: the end of the requirement, never a noun it qualifies ("in French
# schools", "in German cities")
_END_EN = (r"(?:\s+(?:language|only|exclusively|throughout|entirely|please|pls|plz|as\s+well)\b|"
           r"(?=\s*(?:[.,;:!?)\]\"'”’(—–-]|$|\s(?:and|but|so|about|on|for|to|with|that|"
           r"which|while|without|using|no|not|nothing|as|if|when|because|describing|"
           r"explaining|telling|giving)\b)))")
# how completely: "entirely", "only", "100%"
_WHOLLY_EN = (r"(?:(?:entirely|only|exclusively|solely|wholly|fully|completely|purely|all|"
              r"strictly|100%|in\s+(?:its|their)\s+entirety|in\s+full)\s+)?")
# the response as a subject: "your entire response", "the whole reply", "everything you write"
_RESPONSE_EN = (r"(?:(?:your|the|this|my|our)\s+(?:(?:entire|whole|full|complete|final|"
                r"written|)\s*)(?:response|answer|reply|output|text|message|submission)s?|"
                r"everything(?:\s+(?:you\s+(?:write|say|produce|output|send)(?:\s+back)?|"
                r"in\s+(?:your|the)\s+"
                r"(?:response|answer|reply)))?|all\s+of\s+(?:it|your\s+(?:response|answer|"
                r"reply|text))|the\s+whole\s+thing|it\s+all|all\s+(?:of\s+)?(?:the\s+)?(?:text|"
                r"writing|content)|it)")
# "should be", "must be written", "has to be", "is", "needs to be composed"
_BE_EN = (r"(?:(?:should|must|shall|will|has\s+to|have\s+to|needs?\s+to|is\s+to|ought\s+to|"
          r"can\s+only|may\s+only)\s+(?:only\s+)?be|is|are|be)\s+(?:(?:written|composed|"
          r"given|delivered|provided|presented|produced|done|kept|phrased)\s+)?")
# verbs whose object is the response itself: "answer", "respond", "reply"
# (and "answer" as often mistyped: "anwser", "awnser")
_ANSWER_EN = (r"(?:respond(?:ing)?|(?:answer|anwser|awnser|asnwer)(?:ing)?|repl(?:y|ying)|"
              r"write|writing|explain)")
# verbs a short object and then "in <language>" follow: "write a short poem in French"
_MAKE_EN = (r"(?:write|compose|draft|create|tell|give|send|sing|produce|provide|prepare|"
            r"generate)")
_OBJECT_EN = (r"(?:(?:me|us|her|him|them)\s+)?(?:a|an|one|some|the|your|this|that|these|those|"
              r"my|our|his|her|their)\s+"
              r"(?:(?!(?:to|of|on|about|for|with|from|at|by|who|which|that|in|into)\b)"
              r"[\w'-]+\s+){0,3}?")


# a negation right before the words: "Don't reply in English, reply in Arabic", "not in English"
_NOT_BEFORE = re.compile(r"\b(?:don['’]?t|dont|do\s+not|never|not)\s+(?:please\s+)?$", re.I)


def _code(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    if _NOT_BEFORE.search(m.string, max(0, m.start() - 16), m.start()):
        return []
    code = code_of(m.group("lang"))
    return [("language", {"language": code})] if code else []


# a sentence asking what words mean or how to say them in a language: "how do you say 'hi' en
# español?"
_ABOUT_WORDS = re.compile(r"\b(?:mean|means|meaning|say|said|translate[sd]?|translation|"
                          r"pronounce)\b[^.!?\n]*$|^[^.!?\n]*\?", re.I)


def _native(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """The language named in itself, unless its sentence asks about words in it."""
    start = max(m.string.rfind(c, 0, m.start()) for c in ".!?\n") + 1
    if _ABOUT_WORDS.search(m.string, start, m.start()) \
            or _ABOUT_WORDS.match(m.string, m.end()):
        return []
    return _code(m)


# a word of a topic, not a clause about people using a language: "the French Revolution"
_TOPIC_WORD = r"(?!(?:who|whom|which|that|speak\w*|writ\w*|spoken|sung)\b)[\w'-]+"
# things that are in a language themselves: "books in French" names them, not the reply's
_IN_A_LANGUAGE = (r"(?:books?|films?|movies?|songs?|poems?|poetry|literature|music|novels?|words?|"
                  r"phrases?|names?|idioms?|expressions?|slang|writing|texts?|podcasts?|shows?|"
                  r"series|media|sayings?|proverbs?|jokes?|puns?|lyrics|titles?|signs?|videos?)")
# the text a request asks for, as the subject of "should be in": "the summary", "your note"
_TEXT_EN = (r"(?:summary|note|letter|email|e-mail|poem|story|essay|post|caption|description|"
            r"speech|report|article|review|bio|toast|message|script|recipe|explanation|"
            r"translation|document|paragraph|piece|copy|invitation|announcement|haiku|song|ad|"
            r"advert|advertisement|notice|card|postcard|memo|flyer|brochure|tweet|newsletter|"
            r"greeting|blurb|pitch|listing|menu|sign|poster|leaflet|entry|text)(?:\s+itself)?")

# a word of the object of a verb of summing up, not a clause about it: "these meeting notes"
_OBJECT_WORD = (r"(?!(?:how|why|what|when|where|which|who|whom|whose|whether|that|into|in)\b)"
                r"[\w'’-]+")
# a text the language's adjective names as the response ("a Chinese blurb"), and the words
# that may come between ("a Chinese promotional line"); not a genre ("a Chinese poem"), a
# dish or a place's thing ("a French toast recipe", "a Chinese takeout menu") nor a
# translation target ("a German translation of this note", "the Spanish version")
_NAMED_TEXT = (r"(?:blurb|caption|slogan|tagline|bio|email|e-mail|letter|note|message|essay|"
               r"summary|paragraph|copy|post|tweet|greeting|speech|"
               r"description|introduction|intro|ad|advert|advertisement|announcement|notice|"
               r"invitation|line|pitch|reply|response|answer|text)")
_TEXT_KIND = (r"(?:short|brief|quick|formal|informal|polite|casual|friendly|promotional|"
              r"marketing|advertising|catchy|welcome|thank-you|cover)")


_PHRASINGS: tuple[Phrasing, ...] = (
    # "your entire response should be in French", "everything you write is in Russian"
    Phrasing(
        rf"\b{_RESPONSE_EN}\s+{_BE_EN}{_WHOLLY_EN}(?:in|using)\s+(?:the\s+)"
        rf"?{_REGISTER}{LANG_EN}{_END_EN}",
        _code,
        kind="language", example="All text must be in Polish.", counter="in all caps"),
    # "answer in German", "respond only in Italian", "responding exclusively in Arabic"
    Phrasing(
        rf"\b{_ANSWER_EN}\s+(?:(?:to\s+)?(?:me|us|this|it|the\s+following|(?:the|my|this)\s+"
        rf"(?:question|request|prompt|query))\s+)?{_WHOLLY_EN}(?:in|using)\s+(?:the\s+)"
        rf"?{_REGISTER}{LANG_EN}"
        rf"{_END_EN}", _code,
        kind="language", example="answer in French", counter="written in French"),
    # "a memo composed entirely in French": a participle with a word of wholeness
    Phrasing(
        rf"\b(?:written|composed|drafted|delivered|given|presented|phrased)\s+(?:entirely|only|"
        rf"exclusively|solely|wholly|fully|completely|purely|all)"
        rf"\s+in\s+{_REGISTER}{LANG_EN}{_END_EN}",
        _code,
        kind="language", example="Your caption must be written entirely in Dutch.",
        counter="Your answer must be written in French."),
    # "use Portuguese for the whole thing", "only use Italian in your reply", "using only Korean"
    Phrasing(
        rf"\b(?:use|using)\s+{_WHOLLY_EN}{LANG_EN}\s+(?:only\b|throughout\b|exclusively\b|"
        rf"for\s+(?:the\s+whole\s+thing|everything|all\s+of\s+it|(?:your|the)\s+(?:entire\s+|"
        rf"whole\s+)?(?:response|answer|reply|output|text))|in\s+(?:your|the)\s+(?:entire\s+|"
        rf"whole\s+)?(?:response|answer|reply|output))", _code,
        kind="language", example="Using French throughout,", counter="Language: French."),
    Phrasing(
        rf"\bonly\s+use\s+{LANG_EN}\b", _code,
        kind="language", example="Only use Italian in your reply.",
        counter="Only use short words in your reply."),
    Phrasing(
        rf"\b(?:use|using)\s+(?:only|exclusively|solely)\s+(?:the\s+)?{LANG_EN}{_END_EN}", _code,
        kind="language", example="Describe your town using only Korean.",
        counter="Describe your town using only short words."),
    # "in Vietnamese only", "(in Korean, please)", "in Spanish, no English"
    Phrasing(
        rf"\b(?:in|using)\s+{LANG_EN}\s+only\b", _code,
        kind="language", example="Respond in Spanish only.", counter="Respond in Spanish."),
    Phrasing(
        rf"\(\s*(?:all\s+|only\s+|entirely\s+)?(?:(?:written|composed|told|given|done)\s+)?"
        rf"(?:all\s+|only\s+|entirely\s+)?in\s+{_REGISTER}{LANG_EN}"
        rf"(?:\s+only)?\s*(?:[,;]\s*please\s*|\s+please\s*)?\)", _code,
        kind="language", example="Offer advice on a speech (written in French).",
        counter="Offer advice on writing a thank-you speech."),
    # "the output language must be Japanese", "the language of your answer should be German",
    # "Language: Spanish"
    Phrasing(
        rf"\b(?:(?:response|answer|reply|output|writing)\s+language|language\s+of\s+(?:your|the)"
        rf"\s+(?:\w+\s+)?(?:response|answer|reply|output|text))\s*(?::|(?:should|must|has\s+to|"
        rf"needs\s+to|shall|will)\s+be|is)\s*{LANG_EN}{_END_EN}", _code,
        kind="language", example="Response language: Italian.",
        counter="Compose your entire response in the Italian language."),
    Phrasing(
        rf"(?:^|(?<=[.;,\n]))\s*(?:[-*•]\s*)?(?:output\s+|response\s+)?language\s*[:：]\s*{LANG_EN}"
        r"(?=\s*(?:[.;,\n]|$))", _code,
        kind="language", example="Language: French.", counter="Language: formal."),
    Phrasing(
        rf"(?:^|(?<=[。；;，,\n]))\s*(?:回答|回复|输出)?语言\s*[：:]\s*{LANG_ZH}(?=\s*"
        rf"(?:[。；;，,\n]|$))",
        _code,
        kind="language", example="回答语言：日语。", counter="回答请使用俄语。"),
    # "do the whole thing in German", "I'd like the answer written in Italian"
    Phrasing(
        rf"\b(?:do|put)\s+(?:it|this|everything|it\s+all|all\s+of\s+it|the\s+whole\s+thing)\s+"
        rf"{_WHOLLY_EN}in\s+{_REGISTER}{LANG_EN}{_END_EN}", _code,
        kind="language", example="Could you do the whole thing in German?",
        counter="Write the whole thing in block capitals."),
    Phrasing(
        rf"\b{_RESPONSE_EN}\s+(?:(?:to\s+)?be\s+)?(?:written|composed|given|delivered|done"
        rf"|provided)\s+"
        rf"{_WHOLLY_EN}in\s+{_REGISTER}{LANG_EN}{_END_EN}", _code,
        kind="language", example="I'd like the answer written in Italian.",
        counter="Your answer must be written in French."),
    # both languages at once: "Reply in 日语 please", "回复用 Spanish", "，in English，"
    Phrasing(
        rf"\b{_ANSWER_EN}\s+{_WHOLLY_EN}(?:in|using|用|使用)\s*{LANG_ZH}", _code,
        kind="language", example="Please answer 用中文。", counter="回答请使用中文。"),
    Phrasing(
        rf"\b(?:use|using)\s+{LANG_ZH}", _code,
        kind="language", example="Use 中文 and 不要用逗号。", counter="全文不要使用逗号。"),
    # a terse sentence of its own: "Spanish only."
    Phrasing(
        rf"(?:^|(?<=[.!?;:]\s)|(?<=[\n(，。；：]))\s*{LANG_EN}\s+only\s*(?=[.!,;)\n，。；]|$"
        rf"|\s+please\b)",
        _code,
        kind="language", example="Spanish only.", counter="Respond in Spanish only."),
    Phrasing(
        rf"(?:回答|回复|作答|输出|全文|\b(?:answer|response|reply|output)\s*)(?:请|需|要|必须|都"
        rf"|全部|均)*"
        rf"(?:使用|用|以)\s*{LANG_EN}\b",
        _code,
        kind="language", example="回复用 Spanish，简单点。", counter="用韩语回复我就行。"),
    Phrasing(
        rf"(?<=[，、；：（])\s*in\s+{LANG_EN}\s*(?=[，。；、）]|$)", _code,
        kind="language", example="请写一段 self-introduction，in English，谢谢。",
        counter="请写一段产品描述。"),
    Phrasing(
        rf"(?:用|使用|以|采用)\s*{LANG_EN}\s*(?:来)?(?:写|撰写|回答|回复|作答|书写|输出)", _code,
        kind="language", example="用 English 回答，不要用大写。",
        counter="请全部使用大写字母回答。"),
    # an ISO code on a labelled line: "Language: fr", "locale=pt-BR"
    Phrasing(
        r"(?:^|(?<=[.;,\n]))\s*(?:[-*•]\s*)?(?:output\s+|response\s+|reply\s+)?(?:language|lang"
        r"|locale)"
        r"\s*[:=：]\s*(?P<lang>[a-z]{2})(?:[-_][a-z]{2})?(?=\s*(?:[.;,\n]|$))",
        lambda m: [("language", {"language": m.group("lang").lower()})]
        if m.group("lang").lower() in NAMES else [],
        kind="language", example="Language: fr", counter="Language: plain"),
    # wanting the text in a language: "I need this in French", "can I get it in Polish?"
    Phrasing(
        rf"\b(?:I\s+(?:need|want|would\s+like|['’]d\s+like)|can\s+I\s+(?:get|have))\s+(?:it|this"
        rf"|that|"
        r"everything|the\s+(?:\w+\s+)?(?:answer|response|reply|text|summary|whole\s+thing))\s+"
        rf"(?:written\s+)?(?:all\s+)?in\s+{_REGISTER}{LANG_EN}{_END_EN}", _code,
        kind="language", example="I need this in French.", counter="answer in French"),
    Phrasing(
        rf"\bmake\s+{_RESPONSE_EN}\s+(?:all\s+|entirely\s+)?{LANG_EN}\s*(?=[.!;:,\n]|$)", _code,
        kind="language", example="Make the whole reply Spanish.",
        counter="put the whole reply in quotation marks"),
    # the language named in itself: "auf Deutsch bitte", "en español por favor"
    Phrasing(
        rf"(?<![\w-]){LANG_NATIVE}(?![\w-])", _native,
        kind="language", example="Explain how rainbows form, auf Deutsch bitte.",
        counter="Explain how tides work."),
    # a country for its language: "in the language spoken in the Netherlands", "in the
    # official language of Brazil"
    Phrasing(
        rf"\b(?:in|using)\s+the\s+(?:(?:official|main|national|native|local)\s+)?language\s+"
        rf"(?:(?:spoken|used)\s+)?(?:in|of)\s+(?:the\s+)?{LANG_COUNTRY}\b", _code,
        kind="language", example="Please respond in the official language of Brazil.",
        counter="What is the official language of Brazil?"),
    # the text asked for as a subject with a modal: "The summary is to be written in Portuguese",
    # "A welcome note for new volunteers should be composed in Finnish", "the flyer text itself
    # has to be in Russian"
    Phrasing(
        rf"\b(?:the|your|this|a|an)\s+(?:(?!(?:for|to|from|about|on|at|of|in)\b)[\w'-]+\s+){{0,3}}?"
        rf"{_TEXT_EN}(?:\s+(?:for|to|from|about|on|at)\s+[^.,;:!?\n]{{1,50}}?)?\s+(?:should|"
        rf"must|shall|will|has\s+to|needs?\s+to|is\s+to|are\s+to|ought\s+to)\s+(?:only\s+)?be\s+"
        rf"(?:(?:written|composed|given|delivered|provided|presented|done|kept)\s+)?{_WHOLLY_EN}"
        rf"(?:in|using)\s+(?:the\s+)?{_REGISTER}{LANG_EN}{_END_EN}", _code,
        kind="language", example="A thank-you card for the nurses should be written in Dutch.",
        counter="A thank-you card for the nurses should be written in pencil."),
    # a language alone in a clause after a comma, or in a terse sentence: "..., in French
    # please.", "In Italian, thanks.", "..., entirely in Italian.", "..., the whole thing in
    # Korean please.", "..., written in Brazilian Portuguese, please."
    Phrasing(
        rf"(?:(?:^|(?<=[,.!?;:—–]\s)|(?<=[,\n—–]))\s*(?:all\s+|only\s+|entirely\s+|wholly\s+|"
        rf"(?:the\s+)?(?:whole|entire)\s+thing\s+)?|(?<=,\s)(?:written|composed)\s+)in\s+"
        rf"{LANG_EN}"
        r"(?:\s+only)?\s*,?\s*(?:please|pls|plz|thanks|thank\s+you|thx)?\s*(?=[.!;:\n(]|$)", _code,
        kind="language", example="A short text, in English.", counter="written in English"),
    # a language set off by commas among other requirements: "..., in French, no longer than
    # 4 sentences" (not one of a list of languages: "in French, Italian and German")
    Phrasing(
        rf"(?<=,)\s*in\s+{LANG_EN}(?:\s+(?:of\s+course|obviously|naturally|please|pls|too|as\s+"
        rf"well))?\s*,(?!\s*(?:and\s+|or\s+)?(?:{LANGUAGE_NAMES})\b)", _code,
        kind="language", example="Summarize it for me, in English of course, in 40 words.",
        counter="Compare the films, in French, Italian and German, of the 1960s."),
    # the language as the text's adjective: "Write a German-language product description"
    Phrasing(
        rf"\b{_MAKE_EN}\s+{_OBJECT_EN}{LANG_EN}[\s-]language\s+[\w'-]+", _code,
        kind="language", example="Write a German-language product description.",
        counter="Write a review of a German-language film."),
    # "write a short poem in French", "tell me a joke in German", "draft a polite email in
    # Japanese declining the invitation" (a participle after it, not a noun in -ing: "in
    # Chinese painting")
    Phrasing(
        rf"\b{_MAKE_EN}\s+{_OBJECT_EN}(?:\w+\s+)(?:(?:for\s+(?:(?:my|our|your|the|a|his|her|"
        rf"their)\s+[\w'’-]+|me|us|her|him|them)|from\s+[\w'’-]+)\s+(?:(?!in\b)[\w'’-]+\s+)?)?in\s+"
        rf"(?:the\s+)?{_REGISTER}{LANG_EN}(?:\s+language)?"
        r"(?=\s*(?:[.,;:!?)]|$|\s(?:about|on|for|that|and|please|describing|explaining|so|"
        r"because|since|to|with|but|if|when|using|instead)\b|\s(?!(?:spelling|painting|"
        r"cooking|writing|speaking|engineering|gardening|clothing|building|banking|printing|"
        r"learning|teaching|reading|calligraphy)\b)[a-z]+ing\b))", _code,
        kind="language", example="Write the reply in Turkish.", counter="Write the reply letter."),
    # Chinese: "回答必须全部使用英文", "请用德语回答", "全文请使用日语", "以西班牙语作答"
    Phrasing(
        rf"(?:回答|回复|作答|输出|全文|答案|正文|内容|全部内容|整篇|文章|回应)(?:时|请|需|需要|要"
        rf"|必须|"
        rf"一律|应|应该|应当|均|都|全部|全|完全|只|仅|统一|务必)*(?:使用|用|以|采用)\s*{LANG_ZH}",
        _code,
        kind="language", example="全文请使用日语。", counter="请全程用英语回答。"),
    Phrasing(
        rf"(?:请|务必|必须|只|仅|全部|全程|一律)(?:使用|用|以)\s*{LANG_ZH}"
        r"(?=[。，,.！!；;\s)）]|$|(?:来)?(?:写|撰写|回答|回复|输出|书写|作答|完成|表达|创作|进行)"
        r")",
        _code,
        kind="language", example="全文请使用日语。", counter="全文不要使用逗号。"),
    # a language alone in a clause: "，用英文，", "把你的回答写成西班牙语"
    Phrasing(
        rf"(?:^|(?<=[，,、；;：:]))\s*(?:全文|全部|都)?(?:用|使用|以)\s*{LANG_ZH}\s*(?:写|撰写"
        rf"|回答|回复|书写)?"
        r"(?=\s*(?:[，,。；;、）)！!]|$))", _code,
        kind="language", example="用葡萄牙语写。", counter="用法语写一段自我介绍。"),
    Phrasing(
        rf"(?<=[^文语][，,；;])\s*{LANG_ZH}\s*(?=[，,；;](?!\s*(?:{ZH_LANGUAGE_NAMES})))",
        _code,
        kind="language", example="帮我写个 caption，英文，带上 #summer 和 #travel 两个 hashtag。",
        counter="帮我写个朋友圈文案 带上“周末”这个词"),
    Phrasing(
        rf"(?:回答|回复|答案|全文|内容)(?:都|全部)?(?:写成|改成|改写成)\s*{LANG_ZH}", _code,
        kind="language", example="把你的回答写成西班牙语。",
        counter="以西班牙语作答，介绍一下你的家乡。"),
    Phrasing(
        rf"(?:^|(?<=[，,。；;\s]))\s*{LANG_ZH}(?:回答|作答|回复|回我)", _code,
        kind="language", example="英文回我 全小写哈", counter="回答里的英文字母一律小写。"),
    Phrasing(
        rf"(?:用|使用|以|采用)\s*{LANG_ZH}\s*(?:来)?(?:写|撰写|回答|回复|输出|书写|作答|完成|表达|"
        r"创作|进行回答)", _code,
        kind="language", example="用葡萄牙语写。", counter="把你的回答写成西班牙语。"),
    # a language alone in a list of requirements: "（英文，不超过60个单词）", "要求：英文，…"
    Phrasing(
        rf"(?:[（(]|要求[：:])\s*(?:全文)?(?:使用|用)?{LANG_ZH}(?:撰写|书写|回答|写作)?\s*"
        rf"(?=[，,、;；)）])",
        _code,
        kind="language",
        example="帮我写一份读书笔记，要求：全文用中文，不少于800字，用“总之”开头，不要使用逗号。",
        counter="写一段100字左右的话介绍长城，全文不要使用任何逗号。"),
    Phrasing(
        rf"(?:回答|回复|输出)(?:的)?语言\s*(?:(?:必须|应|应该|需|要|须)?(?:是|为)|[：:])"
        rf"\s*{LANG_ZH}",
        _code,
        kind="language", example="回答语言：日语。", counter="回答请使用俄语。"),
    # the language opening the request, then what to write: "In German, three sentences: ...",
    # "In Spanish, tell me about ..." (not "In French, 'chat' means cat")
    Phrasing(
        rf"(?:^|(?<=[.!?]\s)|(?<=\n))\s*in\s+{_REGISTER}{LANG_EN}\s*,\s*(?=(?:please|pls|plz|"
        rf"(?:{EN_NUMBER})\s+(?:sentences?|paragraphs?|words|bullet|lines?|points?|tips|"
        r"reasons)|write|tell|explain|describe|give|list|summari[sz]e|answer|respond|reply)\b)",
        _code,
        kind="language", example="In German, three sentences: why is sleep important?",
        counter="In French, 'chat' means cat."),
    # a line of a spec list: "- must be in French", "2) written in Italian"
    Phrasing(
        rf"(?:^|(?<=\n))[ \t]*(?:[-*•]|\d{{1,2}}[.)]|\([a-z\d]\))[ \t]*(?:(?:it\s+|the\s+\w+\s+)?"
        r"(?:must|should|has\s+to|needs\s+to|shall|will)\s+be\s+)?(?:(?:written|composed)\s+)?"
        rf"{_WHOLLY_EN}in\s+{_REGISTER}{LANG_EN}[ \t]*[.;]?[ \t]*(?=\n|$)", _code,
        kind="language", example="Constraints:\n- must be in French\n- under 90 words",
        counter="Constraints:\n- must mention France\n- under 90 words"),
    # "Write about the French Revolution in Spanish": a topic, then the language at the end
    # (not "write about poets who write in Spanish", nor "about the best books in French")
    Phrasing(
        rf"\b(?:write|tell\s+(?:me|us)|talk)\s+about\s+(?:{_TOPIC_WORD}\s+){{0,4}}?"
        rf"(?!{_IN_A_LANGUAGE}\b){_TOPIC_WORD}\s+in\s+{LANG_EN}\s*(?=[.!;\n]|$)", _code,
        kind="language", example="Write about the French Revolution in Spanish.",
        counter="Write about poets who write in Spanish."),
    # "only German is allowed", "no language other than German"
    Phrasing(
        rf"\bonly\s+{LANG_EN}\s+(?:is|may\s+be|can\s+be|should\s+be)\s+(?:allowed|permitted|used|"
        r"accepted)", _code,
        kind="language", example="Only German is allowed in your response.",
        counter="Commas are not allowed in your response."),
    Phrasing(
        rf"\bno\s+(?:other\s+)?language\s+(?:other\s+)?than\s+{LANG_EN}\b", _code,
        kind="language", example="No language other than German, please.",
        counter="No other language tips, please."),
    # the response said to be a language's: "The answer should be Spanish-language"
    Phrasing(
        rf"\b{_RESPONSE_EN}\s+{_BE_EN}{_WHOLLY_EN}{LANG_EN}[\s-]language"
        r"(?=\s*(?:[.,;:!?)]|$|\s(?:and|but|please|only)\b))", _code,
        kind="language", example="The answer should be Spanish-language and short.",
        counter="The answer should be about Spanish-language films."),
    # a language refused, then the one asked for: "no English please, Polish.", "Don't write
    # this in English, Vietnamese only" (not a list of languages refused: "not in English,
    # French or German")
    Phrasing(
        rf"\b(?:no|not\s+in|never\s+in|(?:don['’]?t|do\s+not)\s+(?:write|reply|answer|respond)"
        rf"(?:\s+(?:this|it|to\s+(?:me|this)))?\s+in)\s+(?:{LANGUAGE_NAMES})(?:\s+(?:please|pls))?"
        rf"\s*[,;:—–-]+\s*(?:(?:but|just|only|use|instead)\s+)?(?:in\s+)?{LANG_EN}"
        rf"(?!\s*(?:,|or\b|and\b)\s*(?:or\s+|and\s+)?(?:{LANGUAGE_NAMES})\b)"
        r"(?:\s+(?:only|please|pls|instead))?\s*(?=[.!;,:\n—–-]|$)", _code,
        kind="language", example="no english please, polish. my dad only reads polish",
        counter="Not in English, French, or German: which is the hardest to learn?"),
    # "use <language>" as a clause of its own: "Don't answer in English, use Russian."
    Phrasing(
        rf"(?:^|(?<=[,.;:!?—–]\s)|(?<=[,;\n—–]))\s*(?:(?:please|just|instead)\s+)?use\s+"
        rf"{LANG_EN}(?:\s+(?:instead|please|only))?\s*(?=[.!;\n]|$)", _code,
        kind="language", example="Don't answer in English, use Russian.",
        counter="Use Russian words sparingly."),
    # the text asked for, opening the request or after its label, and its language: "Reference
    # letter template in French, with four [placeholder] fields", "Writing practice: a diary
    # entry in Chinese about ..." (not a question about such texts)
    Phrasing(
        rf"(?:^|(?<=\n))[ \t]*(?:[\w' -]{{1,24}}:[ \t]*)?(?:(?:a|an)\s+)?(?:[\w'-]+\s+){{0,3}}?"
        rf"{_TEXT_EN}(?:\s+(?:template|draft))?\s+in\s+{_REGISTER}{LANG_EN}{_END_EN}"
        r"(?![^.!?\n]*\?)", _code,
        kind="language", example="Reference letter template in French, with four fields.",
        counter="Reference letter template in French? Is that usual?"),
    # the text named by its language as an adjective: "need a chinese blurb for our
    # toothbrush", "write a 100-character Chinese promotional line"
    Phrasing(
        rf"\b(?:need|want|write|compose|draft|create|make|give|send|get|produce|prepare|provide|"
        rf"craft)\s+(?:(?:me|us|her|him|them)\s+)?(?:a|an|one)\s+(?:[\w-]+\s+)?{LANG_EN}\s+"
        rf"(?:{_TEXT_KIND}\s+)?{_NAMED_TEXT}(?=\s*(?:[.,;:!?)]|$|\s(?:for|about|on|to|that|"
        r"which|with|from)\b))", _code,
        kind="language", example="I need a Chinese blurb for our new tea.",
        counter="Write a French toast recipe for two."),
    # a summary in a language: "Summarize these meeting notes in Chinese for the team"
    Phrasing(
        rf"\b(?:summari[sz]e|recap|sum\s+up|outline|retell)\s+(?:{_OBJECT_WORD}\s+){{0,5}}?"
        rf"(?!{_IN_A_LANGUAGE}\b){_OBJECT_WORD}\s+in\s+{_REGISTER}{LANG_EN}{_END_EN}", _code,
        kind="language", example="Summarize these meeting notes in Chinese for the team.",
        counter="Summarize the best songs in French."),
    # the language alone before "please", opening the request or a parenthesis: "Mandarin
    # please: a pitch", "(Spanish please, it's for my mom.)"
    Phrasing(
        rf"(?:^|(?<=[.!?]\s)|(?<=[\n(]))\s*{LANG_EN}\s*,?\s*(?:please|pls|plz)\s*(?=[.!:;,\n)]|$)",
        _code,
        kind="language", example="Mandarin please: a short pitch for a hotpot place.",
        counter="Mandarin lessons, please: where do I start?"),
)

TABLES = (Table(_I | re.M, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)


def asked_languages(text: str) -> set[str]:
    """The codes of the languages the request's words ask the response to be in, as the rows
    above read them (before the pre-pass weighs whose each is): what a reading that depends on
    the response's language asks."""
    return {params["language"] for matcher, build in (*RULES, *PEOPLE_RULES)
            for match in matcher.finditer(text) for _, params in build(match)}
