"""The forms code reads off the whole response, each a flag or a name: no commas ("without
any commas", "commas are not allowed", "comma-free", "不要使用逗号", "逗号一律不得使用"), a
P.S. or P.P.S., JSON ("in JSON format", "return valid JSON", "以JSON格式输出", "输出必须是合法的
JSON"), an XML tag to answer inside ("inside <answer> tags", "wrapped in <summary></summary>"),
and every [[ ## name ## ]] field marker the request writes, bar a DSPy-style prompt's input
fields and a marker in a sentence about the user's own template.

A form named as a topic ("explain when a comma is not allowed", "what is JSON?") is no check:
the pre-pass drops it (`rubrics.checks.scope`)."""

from __future__ import annotations

import re
from typing import Any

from rubrics.checks.phrasings.shared import Build, Matcher, Phrasing, Table, flag, rules_of

_I = re.I | re.S

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
    Phrasing(
        r"\b(?:no|zero|without|avoid(?:ing)?|leave\s+out|omit|(?:do\s+not|don['’]t|must\s+not|"
        r"should\s+not|never|cannot|can['’]t)\s+(?:use|include|contain|put|add|have)|refrain\s+from"
        r"\s+using)\s+(?:(?:any|all|using|the\s+use\s+of|a\s+single|a|the)\s+)*commas?\b|"
        r"\bcomma-free\b",
        flag("no_commas"),
        kind="no_commas", example="no commas here", counter="no periods here"),
    Phrasing(
        r"\bcommas?\s+(?:are|is)\s+(?:strictly\s+|absolutely\s+)?(?:not\s+(?:allowed|permitted|"
        r"to\s+be\s+used)|forbidden|banned|prohibited|off[\s-]limits)|\bcommas?\s+(?:must|should|"
        r"may|can)\s*(?:not|n['’]t)\s+(?:be\s+used|appear)|逗号(?:一律)?(?:不得|不能|不要|不可"
        r"|禁止)"
        r"(?:使用|出现)", flag("no_commas"),
        kind="no_commas", example="Commas are not to be used.",
        counter="Explain the quote 'To be or not to be' in simple terms."),
    Phrasing(
        r"(?<![A-Za-z])(P\.\s?P\.\s?S\.?|P\.\s?S\.)", lambda m: [("postscript", {
           "marker": "P.P.S" if m.group(1).upper().startswith("P.P") else "P.S."})],
        kind="postscript", example="请在结尾加上附言（P.S.）。",
        counter="请在结尾加上附言。"),
    Phrasing(
        r"\b(?:in|as|using|use|output|return|format(?:ted)?\s+as|valid)\s+(?:only\s+|just\s+|"
        r"pure\s+|raw\s+|strictly\s+)?(?:a\s+|the\s+)?(?:(?:valid|single)\s+)?json(?:\s+format|"
        r"\s+object)?\b",
        flag("json"),
        kind="json", example="Return only JSON.", counter="JSON only."),
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
)

TABLES = (Table(_I, _PHRASINGS),)

RULES: tuple[tuple[Matcher, Build], ...] = rules_of(TABLES)
