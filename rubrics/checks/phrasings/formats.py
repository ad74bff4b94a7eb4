"""The forms code reads off the whole response, each a flag or a name: no commas ("without
any commas", "commas are not allowed", "comma-free", "leave out every comma", "without using
the ',' character", "periods are fine, commas are not.", "不要使用逗号", "逗号一律不得使用"), a
P.S. or P.P.S., JSON ("in JSON format", "return valid JSON", "as one JSON document", "convert
my list into json", "Respond with a JSON object", "the reply must consist solely of a JSON
document", "format your entire response as JSON", "Machine-readable JSON only", "Output: JSON",
"以JSON格式输出", "输出必须是合法的JSON": the whole reply as JSON), an XML tag to answer inside
("inside <answer> tags", "wrapped in <summary></summary>"), every [[ ## name ## ]] field marker
the request writes, bar a DSPy-style prompt's input fields and a marker in a sentence about
the user's own template, the whole response in double quotes ("put the whole reply in
quotation marks", "your answer should be surrounded by double quotes", "Format: the whole
reply inside one pair of double quotation marks", "start your reply with a quotation mark and
end it with one", "..., opening and closing with a double-quote character", "请将整个回答用双引号
括起来"), a <<title>>, and a JSON Schema the request gives (`json_schemas`: "return JSON
that follows this schema: {...}", "as JSON matching {...}", "validates against: {...}").

A form named as a topic ("explain when a comma is not allowed", "what is JSON?", "compare JSON
and YAML", "explain what this JSON Schema accepts"), JSON the request gives ("convert this JSON
into a table", "what's wrong with this json?", "why does this object fail validation? ...
Schema: {...}") or allows inside prose ("you may include one small JSON example") is no check:
the pre-pass drops it; nor are quotation marks asked of a part ("quotation marks around the
book titles"), nor a P.S. that opens a paragraph of the request (the user's own)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from rubrics.checks.phrasings.shared import Build, Matcher, Phrasing, Table, flag, rules_of

_I = re.I | re.S

# the comma named by its sign: "the ',' character", "a "," anywhere"
_COMMA_SIGN = r"[\"'‘“],[\"'’”](?:\s+(?:character|sign|symbol|mark)\b)?"

# --- machine-read field markers: "[[ ## answer ## ]]"
# the names a DSPy-style prompt lists as its inputs ("Your input fields are: 1. `question`"),
# and its sentence naming the fields to answer with
_INPUT_FIELDS = re.compile(r"\binput\s+fields?\s*(?:are|is)?\s*:(?P<names>.*?)(?:\boutput\s+fields?"
                           r"\b|$)", re.I | re.S)
_OUTPUT_FIELDS = re.compile(r"\brespond\s+with\s+the\s+corresponding\s+output\s+fields[^\n]*",
                            re.I)
# a sentence describing the user's own template: "My prompt template uses markers like ..."
_OWN_TEMPLATE = re.compile(r"(?:^|[.!?\n]\s*)(?:my|our)\s+[^.!?\n]*$", re.I)


def _field(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A field marker the request writes is one the response must keep, wherever it is
    written (a layout, a list of fields, "under a [[ ## answer ## ]] line"); not an input
    field of a DSPy-style prompt, nor a marker in a sentence about the user's own template."""
    text, name = m.string, " ".join(m.group("name").split())
    asked = _OUTPUT_FIELDS.search(text)
    if asked and not asked.start() <= m.start() < asked.end():
        return []
    inputs = _INPUT_FIELDS.search(text)
    if inputs and re.search(rf"`{re.escape(name)}`", inputs.group("names")):
        return []
    if _OWN_TEMPLATE.search(text, max(0, m.start() - 80), m.start()):
        return []
    return [("field_marker", {"name": name})]


# --- the whole response in double quotes
_QUOTES = (r"(?:(?:an?|one|a\s+single)\s+(?:pair|set)\s+of\s+|an?\s+)?"
           r"(?:opening\s+and\s+closing\s+)?(?:double[\s-]+)?"
           r"(?:quotation\s+marks?|quotes|quote\s+marks?|quotation|inverted\s+commas|"
           r"speech\s+marks|(?<=double )quote\b|(?<=double-)quote\b)")
# a quotation mark, named or shown ("begin with " and finish with ""), not a quotation as
# content ("begin with a quotation from Einstein")
_QUOTE_MARK = (rf"(?:{_QUOTES}|[\"“”](?=[\s,.;]|$))(?:\s+(?:mark|character|sign))?"
               r"(?!\s+(?:from|by|of|about)\b)")
_WHOLE = (r"(?:(?:your|ur|the|this)\s+(?:(?:entire|whole|full|complete)\s+)?(?:response|answer|"
          r"reply|output|text|message|thing|piece)|everything(?:\s+you\s+(?:write|say))?|"
          r"it\s+all|all\s+of\s+it|it)")
# the whole named by its ends: "from the first word to the last", "from start to finish"
_END_TO_END = (r"(?:from\s+(?:the\s+)?(?:start|beginning|first\s+word)\s+to\s+(?:the\s+)?"
               r"(?:finish|end|last(?:\s+word)?)|at\s+both\s+ends)")
_NEGATED_EN = re.compile(r"\b(?:no|not|never|without)\b[^.;!?\n]{0,30}$|n['’]?t\s+(?:\w+\s+){0,3}$",
                         re.I)
_NEGATED_ZH = re.compile(r"(?:不要|不用|无需|不必|别|不需要|不能|勿)[^。；！？\n]{0,10}$")
_WRAP_VERBS = (r"(?:wrap|enclose|put|place|surround|encase|frame|present|give|deliver|write|"
               r"return|quote|stick|pop)")
_BE_WRAPPED = (r"(?:(?:(?:should|must|shall|will|has\s+to|needs?\s+to|is\s+to)\s+(?:all\s+)?be|is|"
               r"be|are)\s+(?:(?:entirely|fully|completely|all)\s+)?(?:wrapped|enclosed|"
               r"surrounded|put|placed|contained|framed|written|given)|(?:(?:should|must|will)\s+)?"
               r"(?:go|goes|sit|sits)|(?:should|must|shall|will|has\s+to|needs?\s+to)\s+"
               r"(?:all\s+|entirely\s+|fully\s+)?be)")
_ZH_WHOLE = (r"(?:整个|整段|全部|整篇|所有)?\s*(?:回答|回复|答案|输出|内容|全文|文本|回应|"
             r"response|answer|reply|output)\s*")
_ZH_WRAP = r"(?:括起来|包裹|包起来|包住|括住|引起来|包围|框起来)"
# the whole answer said in full ("整段回复", "回复全文", "整个 answer"; not a bare "内容"), its
# ends ("外面", "开头和结尾"), and the marks, in Chinese, as a pair or in English
_ZH_ALL = (r"(?:(?:整个|整段|全部|整篇|所有|你的)\s*(?:回答|回复|答案|输出|文本|回应|内容|response|"
           r"answer|reply|output)|(?:回答|回复|答案|输出|回应)(?:的)?(?:全文|全部内容)|全文|"
           r"(?:回答|回复|答案|输出)(?=的?(?:外面|前后|两端|首尾|开头和结尾)))\s*")
_ZH_ENDS = r"(?:的)?(?:外面|外侧|前后|两端|两边|首尾|开头和结尾|首尾两端)"
_ZH_MODAL = r"(?:都|全部|均|请|需要|要|需|必须|应|须|应该|务必|一律|统一|一定要)*"
_ZH_QUOTES = rf"(?:(?:英文)?(?:双)?引号|“”|\"\"|「」|{_QUOTES})"


def _wrapped(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """The whole response in quotes, unless the clause before negates it ("don't put quotes
    around the answer", "不要用引号")."""
    before = m.string[max(0, m.start() - 40):m.start()]
    if _NEGATED_EN.search(before) or _NEGATED_ZH.search(before):
        return []
    return [("quoted", {})]


# --- the whole reply as JSON, said other ways
# JSON as the reply's form ("a JSON object", "a well-formed JSON document", "pure JSON"), not a
# thing about it ("a JSON Schema", "a JSON file", "a JSON example")
_A_JSON = (r"(?:a\s+|an\s+|one\s+)?(?:(?:valid|single|well-formed|parseable|pure|raw|plain|strict|"
           r"machine-readable)\s+)*json\b(?!\s*(?:schemas?|files?|examples?|snippets?|strings?)\b)")
# the reply as the subject: "your entire response", "the output"
_REPLY = (r"(?:your|the|this)\s+(?:(?:entire|whole|full|complete|final)\s+)?(?:response|reply|"
          r"answer|output)")
# a word saying it is nothing else: "solely", "pure", "nothing but"
_ALONE = r"(?:solely|only|entirely|purely|nothing\s+but|strictly|100%)"
# the start of a clause: a terse requirement of its own ("Machine-readable JSON only: ...")
_CLAUSE_START = r"(?:^|(?<=[.!?;:,]\s)|(?<=[\n(]))\s*"
# code the request asks for: a labelled "Output: JSON" is then what the code outputs
_CODE = re.compile(r"\b(?:script|function|program|code|regex|sql|endpoint|api|parser|converter|"
                   r"python|javascript|typescript|bash)\b", re.I)


def _labelled_json(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """JSON on a labelled line ("Output: JSON"), unless the request asks for code whose output
    the line describes ("Write a Python script. Input: CSV. Output: JSON")."""
    return [] if _CODE.search(m.string) else [("json", {})]


# after a period, what shows it is no full stop: a lowercase word or a comma
_NOT_A_FULL_STOP = re.compile(r"\s+(?-i:[a-z])|[,;:)]")


# a postscript of the request's own, after a blank line: "...\n\nP.S. keep it short"
_OWN_POSTSCRIPT = re.compile(r"\n[ \t]*\n[ \t]*$")
# a title that opens with the letters, quoted after what it names: "the movie 'P.S. I Love
# You'", "a song called "P.S. I'm Still Not Over You""
_TITLE_BEFORE = re.compile(r"\b(?:movie|film|book|novel|song|album|show|series|play|episode|"
                           r"podcast|called|titled|named|entitled)\s+[\"'“‘]$", re.I)


def _postscript(m: re.Match[str]) -> list[tuple[str, dict[str, Any]]]:
    """A P.S., or a P.P.S. with its last period as written: "add a P.P.S. that jokes..." keeps
    it; at a sentence's end ("begin it with P.P.S.") the period is the sentence's. A P.S. that
    opens a paragraph of the request is the user's own, and one that opens a quoted title
    ("the movie 'P.S. I Love You'") a name: no request for one."""
    if _OWN_POSTSCRIPT.search(m.string, 0, m.start()) \
            or _TITLE_BEFORE.search(m.string, max(0, m.start() - 20), m.start()):
        return []
    if not m.group(1).upper().startswith("P.P"):
        return [("postscript", {"marker": "P.S."})]
    kept = m.group(1).endswith(".") and _NOT_A_FULL_STOP.match(m.string, m.end())
    return [("postscript", {"marker": "P.P.S." if kept else "P.P.S"})]


_PHRASINGS: tuple[Phrasing, ...] = (
    # machine-read markers: "[[ ## answer ## ]]", "inside <answer> tags"
    Phrasing(
        r"\[\[\s*##\s*(?P<name>\w[\w ]{0,38}?)\s*##\s*\]\]", _field,
        kind="field_marker", example="[[ ## answer ## ]]", counter="<answer>42"),
    Phrasing(
        r"\b(?:in|inside|within|between|enclosed\s+in|wrapped\s+in|wrap\s+[^.<\n]{0,40}?\s+in)\s+"
        r"(?:the\s+|an?\s+)?`?<([A-Za-z][\w-]{0,30})>`?(?:\s*(?:and|\.\.\.|…)?\s*`?</\1>`?)?"
        r"(?:\s+(?:xml\s+)?tags?)?", lambda m: [("xml_tag", {"tag": m.group(1)})],
        kind="xml_tag", example="Put your final answer inside <answer></answer> tags.",
        counter="Put your whole answer inside double quotation marks."),
    # English form
    Phrasing(
        r"\b(?:no|without(?:\s+using)?(?:\s+any)?|refrain\s+from\s+(?:the\s+use\s+of\s+|(?:using"
        r"|employing|utili[sz]ing|including|adding)\s+)?(?:any\s+)?|"
        r"not?\s+use\s+(?:any\s+)?)commas?\b", flag("no_commas"),
        kind="no_commas", example="Do not use any commas.", counter='Do not use the word "car".'),
    # (the comma named by its sign too: "without using the ',' character anywhere")
    Phrasing(
        r"\b(?:no|zero|without|w/o|avoid(?:ing)?|leave\s+out|omit|(?:do\s+not|don['’]t|must\s+not|"
        r"should\s+not|never|cannot|can['’]t)\s+(?:use|include|contain|put|add|have)|refrain\s+from"
        r"\s+using)\s+(?:(?:any|all|every|each|using|the\s+use\s+of|a\s+single|a|the)\s+)*"
        rf"(?:commas?\b|{_COMMA_SIGN})|\bcomma-free\b|"
        r"\bnot\s+(?:a\s+single|one|even\s+one)\s+comma\b",
        flag("no_commas"),
        kind="no_commas", example="Leave out every comma.",
        counter="A semicolon, not a comma."),
    # (and said short after what is allowed: "periods are fine, commas are not.")
    Phrasing(
        r"\bcommas?\s+(?:are|is)\s+not(?=\s*(?:[.;!\n]|$))|"
        r"\bcommas?\s+(?:are|is)\s+(?:strictly\s+|absolutely\s+)?(?:not\s+(?:allowed|permitted|"
        r"to\s+be\s+used)|forbidden|banned|prohibited|off[\s-]limits)|\bcommas?\s+(?:must|should|"
        r"may|can)\s*(?:not|n['’]t)\s+(?:be\s+used|appear)|逗号(?:一律)?(?:不得|不能|不要|不可"
        r"|禁止)"
        r"(?:使用|出现)", flag("no_commas"),
        kind="no_commas", example="Commas are not to be used.",
        counter="Explain the quote 'To be or not to be' in simple terms."),
    Phrasing(
        r"(?<![A-Za-z])(P\.\s?P\.\s?S\.?|P\.\s?S\.)", _postscript,
        kind="postscript", example="请在结尾加上附言（P.S.）。",
        counter="请在结尾加上附言。"),
    Phrasing(
        r"\b(?:in|as|using|use|output|return|format(?:ted)?\s+as|valid)\s+(?:only\s+|just\s+|"
        r"pure\s+|raw\s+|strictly\s+)?(?:a\s+|an\s+|the\s+|one\s+)?(?:(?:valid|single)\s+)?"
        r"json(?:\s+format|\s+object|\s+document)?\b",
        flag("json"),
        kind="json", example="Return only JSON.", counter="JSON only."),
    # JSON as what the reply is made of: "Respond with a JSON object", "The reply must consist
    # solely of a well-formed JSON document", "it has to be pure JSON", "format your entire
    # response as JSON"
    Phrasing(
        rf"\b(?:respond|reply|answer)\s+(?:{_ALONE}\s+)?with\s+{_A_JSON}", flag("json"),
        kind="json", example="Respond with a JSON object mapping each city to its country.",
        counter="Respond with a short joke about JSON."),
    Phrasing(
        rf"\b{_REPLY}\s+(?:(?:must|should|shall|will|has\s+to|needs\s+to)\s+)?(?:be|consist\s+"
        rf"(?:{_ALONE}\s+)?of|contain\s+(?:only|nothing\s+but))\s+(?:{_ALONE}\s+)?{_A_JSON}|"
        rf"\bit\s+(?:(?:must|should|has\s+to|needs\s+to)\s+)?be\s+(?:{_ALONE}|pure|raw)\s+"
        rf"{_A_JSON}", flag("json"),
        kind="json", example="The reply must consist solely of a well-formed JSON document.",
        counter="The reply must explain what a JSON document is."),
    Phrasing(
        rf"\b(?:format|write|give|return|deliver|structure|present|produce|provide|send|render|"
        rf"put)\s+(?:me\s+)?{_REPLY}\s+(?:as|in)\s+{_A_JSON}", flag("json"),
        kind="json", example="Please format your entire response as JSON.",
        counter="Please format your entire response as a table."),
    # JSON and nothing else, as a clause of its own or given: "Machine-readable JSON only:
    # ...", "just a JSON array of three ideas", "give me just JSON"
    Phrasing(
        rf"{_CLAUSE_START}(?:(?:machine-readable|pure|raw|valid|strict)\s+)?json\s+only\b|"
        rf"(?:{_CLAUSE_START}|\bgive\s+(?:me|us)\s+)(?:just|only|nothing\s+but)\s+(?:the\s+)?"
        rf"{_A_JSON}", flag("json"),
        kind="json", example="Machine-readable JSON only: the three largest lakes.",
        counter="I only know a little JSON."),
    # a labelled line whose value is JSON alone: "Output: JSON", "Format: JSON." (not a choice
    # or a question: "Format: JSON or YAML?", "Answer: JSON is a text format")
    Phrasing(
        r"(?:^|(?<=[.;\n]))\s*(?:[-*•]\s*)?(?:output|format|response|answer|reply)(?:\s+format)?"
        r"\s*[:：=]\s*(?:(?:valid|pure|raw|strict)\s+)?json(?:\s+(?:only|object|array|document))?"
        r"(?=\s*(?:[.;,!)\n]|$))(?![^.\n]*\?)",
        _labelled_json,
        kind="json", example="Top 3 causes of the French Revolution. Format: JSON.",
        counter="Format: JSON or YAML, which is better for configs?"),
    # the response turned into JSON: "convert my list into json", "turn this into valid JSON"
    Phrasing(
        r"\b(?:convert|turn|transform|put|reformat|restructure|render|change)\b[^.;!?\n]{0,60}?"
        r"\binto\s+(?:a\s+|an\s+|one\s+)?(?:valid\s+)?json\b",
        flag("json"),
        kind="json", example="Convert my grocery list into json.",
        counter="Convert my grocery list into a table."),
    # Chinese form
    Phrasing(
        r"不(?:要|能|得|准|许|可)?(?:使用|用|出现|包含|含有)(?:任何)?逗号", flag("no_commas"),
        kind="no_commas", example="不要使用逗号", counter="不要使用“我认为”这个词。"),
    Phrasing(
        r"(?:避免|禁止|不允许|不许)(?:使用|出现)?(?:任何)?逗号|不(?:能|要|得|可)?(?:带|有|含)逗号",
        flag("no_commas"),
        kind="no_commas", example="全文避免使用逗号。", counter="全文避免使用句号。"),
    Phrasing(
        r"(?:以|用|使用|输出为|返回)\s*JSON\s*(?:格式|形式)?|JSON\s*格式(?:的)?\s*(?:输出|返回"
        r"|回复|回答|结果)|"
        r"(?:输出|回答|回复|结果|返回)(?:内容|结果)?(?:必须|需要|需|应|要|应该)?(?:是|为)(?:合法"
        r"|有效|标准|规范)?的?"
        r"\s*JSON",
        flag("json"),
        kind="json", example="请以JSON返回。", counter="回答请使用中文。"),
    # the whole response in double quotes
    Phrasing(
        rf"\b{_WRAP_VERBS}\s+{_WHOLE}\s+(?:(?:entirely|fully|completely)\s+)?(?:in|with|inside|"
        rf"within|between|by|using)\s+{_QUOTES}", _wrapped,
        kind="quoted", example="wrap ur whole answer in double quotes",
        counter="wrapped in double quotes"),
    # the marks around the whole, the verb optional: "speech marks around the whole response"
    Phrasing(
        rf"\b{_QUOTES}\s+(?:around|surrounding|(?:at|on)\s+(?:the\s+)?(?:start|beginning)\s+and\s+"
        rf"(?:the\s+)?end\s+of|on\s+(?:both|either)\s+(?:ends|sides)\s+of)\s+{_WHOLE}\b", _wrapped,
        kind="quoted", example="Put double quotes around your entire answer.",
        counter="Wrap your entire response in double quotes."),
    # "start and end the answer with a double quote mark", "your response must begin and end
    # with a quotation mark", "the whole thing is quoted"
    # a fragment of its own: "(wrapped in double quotes)", "Inside one pair of double quotes,
    # write ..."
    Phrasing(
        rf"\(\s*(?:all\s+|entirely\s+)?(?:wrapped|enclosed|placed|put|written)\s+(?:in|inside"
        rf"|within|"
        rf"between)\s+{_QUOTES}\s*\)", _wrapped,
        kind="quoted", example="Describe a playground at break time (wrapped in double quotes).",
        counter="Describe a school playground at break time."),
    # the same after a comma, closing the sentence: "Write a fortune-cookie message, wrapped
    # entirely in double quotes."
    Phrasing(
        rf"(?<=,)\s*(?:all\s+|entirely\s+|fully\s+)?(?:wrapped|enclosed|placed|put|written)\s+"
        rf"(?:all\s+|entirely\s+|fully\s+|completely\s+)?(?:in|inside|within|between)\s+"
        rf"(?:one\s+|a\s+single\s+)?(?:pair\s+of\s+)?{_QUOTES}(?=\s*(?:[.!;\n]|$))", _wrapped,
        kind="quoted", example="Write a fortune-cookie message, wrapped entirely in double quotes.",
        counter="Write three sayings, each wrapped in double quotes."),
    Phrasing(
        rf"(?:^|(?<=[.!?]\s)|(?<=\n))\s*(?:(?:wrapped|enclosed|placed|written)\s+)?(?:in|inside"
        rf"|within|"
        rf"between)\s+(?:one\s+|a\s+single\s+)?(?:pair\s+of\s+)?{_QUOTES}\s*,\s*(?:write|describe|"
        r"explain|give|tell|list|compose|draft|create|offer|share|summari[sz]e|answer|respond"
        r"|reply)\b",
        _wrapped,
        kind="quoted", example="Inside one pair of double quotes, write a product description.",
        counter="Inside one pair of double quotes,"),
    Phrasing(
        rf"\b{_WHOLE}\s+(?:(?:should|must|will|has\s+to|needs\s+to)\s+)?(?:both\s+)?(?:start|begin|"
        rf"open)s?\s+and\s+(?:end|close|finish)(?:e?s)?\s+with\s+{_QUOTES}", _wrapped,
        kind="quoted", example="Your response must begin and end with a quotation mark.",
        counter="Begin and end your reply with a double quote mark."),
    Phrasing(
        rf"\b(?:start|begin|open)\s+and\s+(?:end|close|finish)\s+{_WHOLE}\s+with\s+{_QUOTES}",
        _wrapped,
        kind="quoted", example="Open and close your answer with a double quote.",
        counter="Include a famous quote in your answer."),
    # each end in a clause of its own: "start your reply with a quotation mark and end it with
    # one", "begin with " and finish with ""
    Phrasing(
        rf"\b(?:start|begin|open)\s+(?:{_WHOLE}\s+)?with\s+{_QUOTE_MARK}\s*,?\s+and\s+"
        rf"(?:(?:then|also)\s+)?(?:end|finish|close)\s+(?:{_WHOLE}\s+)?with\s+(?:(?:one|"
        rf"another)(?:\s+one)?\b|the\s+same\b|{_QUOTE_MARK})", _wrapped,
        kind="quoted", example="Start your reply with a quotation mark and end it with one.",
        counter="Start your reply with a quotation from Einstein and end it with one from Curie."),
    # a participle after the text asked for: "..., opening and closing with a double-quote
    # character"
    Phrasing(
        rf"(?<=,)\s*(?:opening|starting|beginning)\s+and\s+(?:closing|ending|finishing)\s+with\s+"
        rf"{_QUOTE_MARK}", _wrapped,
        kind="quoted",
        example="Give it as one string, opening and closing with a double-quote character.",
        counter="Give it as one string, opening and closing with a greeting."),
    Phrasing(
        rf"\b{_WHOLE}\s+(?:(?:should|must|will|has\s+to|needs\s+to)\s+be|is|be)\s+(?:entirely\s+|"
        r"fully\s+)?quoted\b", _wrapped,
        kind="quoted",
        example="Write 3 sentences introducing our new running shoe; start and end the answer "
                "with a double quote mark so the whole thing is quoted.",
        counter="Write a short note to a new neighbour introducing yourself (3 or more # "
                "headings). Add a title surrounded by << and >>. Begin and end your reply with a "
                "double quote mark."),
    # a participle with the whole named by its ends or a label: "Format: wrapped in double
    # quotes from the first word to the last"
    Phrasing(
        rf"\b(?:wrapped|enclosed|surrounded|placed|put)\s+(?:in|with|by|within|inside|between)\s+"
        rf"{_QUOTES}\s+{_END_TO_END}", _wrapped,
        kind="quoted",
        example="Make sure your response is enclosed in double quotation marks from start to "
                "finish.",
        counter="Put it in speech marks from start to finish."),
    # a labelled line, the whole or its wrapping verb said or not: "Format: enclosed in
    # quotation marks", "Format: the whole reply inside one pair of double quotation marks"
    Phrasing(
        rf"(?:^|(?<=[.;\n]))\s*(?:[-*•]\s*)?(?:format|output|response|answer|reply)\s*[:：]\s*"
        rf"(?:{_WHOLE}\s+)?(?:(?:all|entirely|fully)\s+)?(?:(?:wrapped|enclosed|surrounded|placed|"
        rf"put|written)\s+)?(?:in|with|by|within|inside|between)\s+{_QUOTE_MARK}", _wrapped,
        kind="quoted", example="Format: the whole reply inside one pair of double quotation marks.",
        counter="Format: with quotes from two experts."),
    # (words set off by commas may come between: "shall be enclosed, in its entirety, within")
    Phrasing(
        rf"\b{_WHOLE}(?:\s*,[^,.;\n]{{1,30}},)?\s+{_BE_WRAPPED}(?:\s*,[^,.;\n]{{1,30}},)?\s+"
        rf"(?:in|with|inside|within|between|"
        rf"by|using)\s+{_QUOTES}",
        _wrapped,
        kind="quoted", example="the entire output goes in double quotes",
        counter="Enclose the entire response in a pair of double quotes."),
    Phrasing(
        r"\b(?:respond|reply|answer)\s+(?:(?:entirely|only)\s+)?(?:in|inside|within|between)\s+"
        r"(?:double\s+)?(?:quotation\s+marks|quotes)", _wrapped,
        kind="quoted", example="wrap ur whole answer in double quotes",
        counter="Wrap it in double quotes."),
    Phrasing(
        rf"(?:将|把|请将|请把)?{_ZH_WHOLE}(?:都|全部|均|请|需要|要|需|必须|应)*(?:用|使用|以|放在"
        rf"|放进|置于)(?:英文)?(?:双)?引号"
        rf"(?:内|中|里|之中)?{_ZH_WRAP}?|{_ZH_WHOLE}(?:的)?(?:全部|整个|所有)?(?:内容)?(?:需要|需"
        rf"|要|必须|应|须)?(?:放在|置于)(?:一对)?(?:双)?"
        rf"引号(?:之中|之内|内|中|里)|(?:用|使用|以)(?:英文)?(?:双)?引号(?:将"
        rf"|把){_ZH_WHOLE}{_ZH_WRAP}",
        _wrapped,
        kind="quoted", example="全文用引号包裹。", counter="全文不要使用逗号。"),
    Phrasing(
        rf"(?:用|使用|以){_ZH_QUOTES}\s*(?:包住|括住|包裹|括起|包起|框住|圈住)(?:来)?\s*{_ZH_ALL}",
        _wrapped,
        kind="quoted", example="用双引号包住整个回答。", counter="请将整个回答用双引号括起来。"),
    # "整篇回答外面加上一对引号", "回答的开头和结尾都要加双引号", "整段回复要放进“”里", "整个
    # answer 用 quotation marks 包住", "回复全文须以双引号开头并以双引号结尾"
    Phrasing(
        rf"{_ZH_ALL}{_ZH_ENDS}?{_ZH_MODAL}{_ZH_ENDS}?(?:用|使用|以|放在|放进|放到|置于|加上?|添加"
        rf"|套上|"
        rf"带上)\s*(?:一对|一组)?\s*{_ZH_QUOTES}\s*(?:里|内|中|之中|{_ZH_WRAP}|(?:开头|开始)"
        rf"[^。；\n]{{0,8}}?"
        rf"{_ZH_QUOTES}\s*(?:结尾|结束|收尾))?", _wrapped,
        kind="quoted", example="全文用引号包裹。", counter="全文不要使用逗号。"),
    # a <<title>>
    Phrasing(
        r"double\s+ang(?:ul?ar|le)\s+brackets|<<\s*title\s*>>|\btitle\b[^.\n]{0,60}?<<"
        r"|<<[^<>\n]{0,60}>>"
        r"[^.\n]{0,30}?\btitle\b", flag("title"),
        kind="title", example="Title format: <<Title>>.", counter="<<My Title>>."),
    Phrasing(
        r"<<[^<>]*>>.{0,8}标题|标题.{0,12}(?:<<|双尖括号)|双尖括号.{0,8}标题", flag("title"),
        kind="title", example="标题用<<>>括起来。",
        counter="整段 reply 用 inverted commas 括起来。"),
)

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)

# --- a JSON Schema the request gives, read as JSON rather than by a rule
# the words before it: its name, or a verb the reply must meet it by ("as JSON matching {...}",
# "validates against: {...}", "conforming to {...}")
_SCHEMA = re.compile(r"json\s*schema|schema|\bmatch(?:es|ing)?\b|\bvalid(?:ates?|ating)?\s+"
                     r"against\b|\bconform(?:s|ing)?\s+to\b|\badher(?:e|es|ing)\s+to\b", re.I)
SCHEMA_CHARS = 4000
# an object after the word "schema" is one with "type" or "properties"; after a verb, one only
# a schema would be: properties, a type a schema names, or its combinators
_SCHEMA_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_COMBINATORS = frozenset({"oneOf", "anyOf", "allOf", "$schema"})
# a request about the schema it gives rather than one the reply must meet: explaining it
# ("Explain in plain English what this JSON Schema accepts"), or a question on it or on
# validating against it ("Why does this object fail validation?"; not a polite request, "Can
# you return JSON that validates against this schema?")
_ABOUT_THE_SCHEMA = re.compile(
    r"\b(?:explain|describe|walk\s+me\s+through|paraphrase)\b[^.?!\n]{0,60}\bschema\b|"
    r"(?:^|[.!?\n]\s*)(?:why|what|how|which|does|is|are)\b[^.?!\n]{0,80}\b(?:schema|"
    r"validat\w*|accepts?|rejects?)\b[^.?!\n]*\?", re.I)


def _is_schema(value: object, named: bool) -> bool:
    """Whether a JSON value the request writes is a schema, `named` when the word "schema"
    comes before it."""
    if not isinstance(value, dict):
        return False
    if named and {"type", "properties"} & set(value):
        return True
    kinds = value.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    return isinstance(value.get("properties"), dict) or bool(_COMBINATORS & set(value)) \
        or bool(kinds) and all(k in _SCHEMA_TYPES for k in kinds)


def json_schemas(request: str) -> Iterator[tuple[int, str, str]]:
    """Each JSON Schema the request spells out right after the word "schema" or a verb the
    answer must meet it by (the answer must be JSON valid against it): where it is named, the
    words naming it and the schema, sorted and compact. None when the request is about the
    schema (explaining it, asking why an object fails it): it is given, not asked of the
    answer."""
    if _ABOUT_THE_SCHEMA.search(request):
        return
    decoder = json.JSONDecoder()
    for match in _SCHEMA.finditer(request):
        brace = request.find("{", match.end(), match.end() + 200)
        if brace < 0:
            continue
        try:
            schema, _ = decoder.raw_decode(request, brace)
        except ValueError:
            continue
        text = json.dumps(schema, ensure_ascii=False, sort_keys=True)
        if _is_schema(schema, "schema" in match.group(0).lower()) and len(text) <= SCHEMA_CHARS:
            yield match.start(), match.group(0), text
