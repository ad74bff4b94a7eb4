"""Keyword and form kinds: words that must or must not appear, letter frequency, case,
commas, the opening and closing phrase, quotes, a <<title>>, a postscript, JSON (and JSON
valid against a schema the request gives), the response language, and machine-read markers
(XML tags, `[[ ## field ## ]]`) the request dictates. The kinds whose requirement one exact
change meets without touching a word (case, commas, the opening and closing phrase, quotes,
a heading made the <<title>>) carry that change as their `conform`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rubrics.checks.base import (
    COUNT_PROPS,
    NO_PARAMS,
    CheckKind,
    CheckOutcome,
    counted,
    flag,
    fold,
    is_cjk,
    params_schema,
    string,
)
from rubrics.checks.jsonsubset import problems
from rubrics.checks.language import LANGUAGES, NAMES, detect

_FENCE = re.compile(r"^```[\w-]*\s*\n(.*?)\n?```$", re.S)
_TITLE = re.compile(r"<<[^<>\n]+>>")
_OPEN_QUOTES, _CLOSE_QUOTES = "\"“«「", "\"”»」"


def occurrences(text: str, word: str) -> int:
    """Case-insensitive occurrences of `word`: as a whole word in alphabetic text, as a
    substring in CJK text (which has no spaces between words)."""
    word = " ".join(word.split())
    if not word:
        return 0
    if is_cjk(word):
        return text.count(word)
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, word.split())) + r"(?!\w)"
    return len(re.findall(pattern, text, re.I))


def unfenced(text: str) -> str:
    """The text without one enclosing ``` code fence (how JSON answers often come)."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match.group(1).strip() if match else stripped


class _RepeatedKey(ValueError):
    pass


_REPEATED = "appears"  # the word of a repeated-key error that the key hint is keyed on


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose names are unique (RFC 8259: a parser keeps only one of a repeated
    name, so a repeat is data lost, not data given)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            count = sum(k == key for k, _ in pairs)
            raise _RepeatedKey(f"the key {key!r} {_REPEATED} {count} times in one object")
        seen[key] = value
    return seen


def parse_json(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(unfenced(text), object_pairs_hook=_unique_keys), None
    except _RepeatedKey as exc:
        return None, f"not valid JSON ({exc})"
    except ValueError as exc:
        return None, f"not valid JSON ({str(exc).split(':')[0]})"


def _keyword(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    return counted("keyword", occurrences(text, params["word"]), params,
                   f"times {params['word']!r}", f"times {params['word']!r}",
                   f"uses of the word {params['word']!r}",
                   how="this very word, not another form of it")


def _forbidden(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    found = occurrences(text, params["word"])
    return flag("forbidden_word", found == 0, f"{params['word']!r} {found} times",
                f"no {params['word']!r}",
                f"Remove every {params['word']!r}, rewording where needed.")


def _letter(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    letter = params["letter"]
    value = text.casefold().count(letter.casefold())
    return counted("letter_frequency", value, params, f"times the letter {letter!r}",
                   thing=f"uses of the letter {letter!r}")


def _lowercase(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    capitals = sum(c.isupper() for c in text)
    return flag("lowercase", capitals == 0, f"{capitals} capital letters",
                "all lowercase letters", "Write every letter in lowercase.")


def _uppercase(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    small = sum(c.islower() for c in text)
    return flag("uppercase", small == 0, f"{small} lowercase letters", "all capital letters",
                "Write every letter in capitals.")


def _no_commas(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    commas = sum(text.count(c) for c in ",，、")
    return flag("no_commas", commas == 0, f"{commas} commas", "no commas",
                "Remove every comma, rewording where one was needed.")


def _edge(text: str, phrase: str, at_end: bool) -> tuple[bool, str]:
    body = fold(text.strip().strip("*_ "))
    target = fold(phrase)
    passed = body.endswith(target) if at_end else body.startswith(target)
    cut = len(target) + 10
    seen = body[-cut:] if at_end else body[:cut]
    return passed, seen


def _starts(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    passed, seen = _edge(text, params["phrase"], at_end=False)
    return flag("starts_with", passed, f"starts {seen!r}", f"to start with {params['phrase']!r}",
                f"Make {params['phrase']!r} the very first words of the answer.")


def _ends(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    passed, seen = _edge(text, params["phrase"], at_end=True)
    return flag("ends_with", passed, f"ends {seen!r}", f"to end with {params['phrase']!r}",
                f"Make {params['phrase']!r} the very last words, with nothing after them.")


def _quoted(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    body = text.strip()
    passed = len(body) >= 2 and body[0] in _OPEN_QUOTES and body[-1] in _CLOSE_QUOTES
    seen = f"{body[:1]!r}...{body[-1:]!r}" if body else "empty text"
    return flag("quoted", passed, f"opens and closes with {seen}",
                "the whole response wrapped in double quotes",
                "Wrap the whole answer in double quotes.")


def _title(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    titles = _TITLE.findall(text)
    return flag("title", bool(titles), f"{len(titles)} titles in <<>>",
                "a title in double angular brackets <<title>>",
                "Add a title in double angular brackets, such as <<A Title>>, as the first "
                "line.")


def _marker(params: Mapping[str, Any]) -> str:
    marker = params["marker"].strip()
    return r"\s*".join(map(re.escape, marker.replace(" ", "")))


def _postscript(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    marker = params["marker"].strip()
    found = re.search(rf"^[ \t*_]*{_marker(params)}", text, re.M | re.I) is not None
    inline = not found and _inline_marker(text, params) is not None
    measured = "a postscript" if found else (
        f"{marker!r} inside a line, not opening its own" if inline else "no postscript")
    action = (f"Start a new last line with {marker!r} for the postscript." if inline
              else f"Add a postscript as the last line, starting with {marker!r}.")
    return flag("postscript", found, measured, f"a postscript starting with {marker!r}",
                action)


def _inline_marker(text: str, params: Mapping[str, Any]) -> re.Match[str] | None:
    """The last occurrence of the postscript's marker after other words on its line."""
    found = list(re.finditer(rf"(?<=\S)[ \t]+({_marker(params)})", text, re.I))
    return found[-1] if found else None


def _separate_postscript(text: str, params: Mapping[str, Any]) -> str | None:
    """A postscript written inside the last paragraph ("... soon. P.S. Bring cake!") put on a
    line of its own, every word kept."""
    match = _inline_marker(text, params)
    if match is None or "\n\n" in text[match.start():]:
        return None
    return f"{text[:match.start()].rstrip()}\n\n{text[match.start(1):]}"


def _json(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    _, error = parse_json(text)
    return flag("json", error is None, error or "valid JSON", "the whole response as JSON",
                _json_action("Answer with only valid JSON, nothing before or after it.", error))


def _json_action(action: str, error: str | None) -> str:
    """`action`, and for a repeated key how to give each key once."""
    if error and _REPEATED in error:
        return f"{action} Give each key once per object; several values of one key go in one list."
    return action


def _json_schema(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    value, error = parse_json(text)
    if error is None:
        try:
            schema = json.loads(params["schema"])
        except ValueError:
            schema = {}
        found = problems(value, schema)
        error = f"JSON that breaks the schema: {'; '.join(found[:3])}" if found else None
    return flag("json_schema", error is None, error or "JSON valid against the schema",
                "JSON valid against the schema the request gives",
                _json_action("Answer with only JSON valid against the schema the request gives.",
                             error))


def _language(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    found = detect(text)
    want = params["language"]
    return flag("language", found == want, f"written in {NAMES.get(found or '', 'no language')}",
                f"the response in {NAMES[want]}", f"Write the whole answer in {NAMES[want]}.")


def _lower(text: str, params: Mapping[str, Any]) -> str:
    return text.lower()


def _upper(text: str, params: Mapping[str, Any]) -> str:
    return text.upper()


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_COMMA = re.compile(r"\s*[,，、]\s*")


def _drop_commas(text: str, params: Mapping[str, Any]) -> str:
    """Thousands separators dropped ("1,000" is 1000), every other comma a space."""
    return _COMMA.sub(" ", _THOUSANDS.sub("", text))


def _with_edge(text: str, phrase: str, at_end: bool) -> str:
    """The phrase added as the text's own first or last line; a first or last line that is
    the phrase short of its punctuation or case is replaced by it."""
    lines = text.strip().split("\n")
    edge = lines[-1] if at_end else lines[0]
    if fold(re.sub(r"\W+", " ", edge)).strip() == fold(re.sub(r"\W+", " ", phrase)).strip():
        lines[-1 if at_end else 0] = phrase
        return "\n".join(lines)
    return f"{text.strip()}\n\n{phrase}" if at_end else f"{phrase}\n\n{text.strip()}"


def _start(text: str, params: Mapping[str, Any]) -> str:
    return _with_edge(text, params["phrase"].strip(), at_end=False)


def _end(text: str, params: Mapping[str, Any]) -> str:
    return _with_edge(text, params["phrase"].strip(), at_end=True)


def _wrap(text: str, params: Mapping[str, Any]) -> str | None:
    """The text in double quotes; a text that opens with a quote it never closes is closed."""
    body = text.strip()
    if not body:
        return None
    if body[0] in _OPEN_QUOTES and body[-1] not in _CLOSE_QUOTES:
        return body + _CLOSE_QUOTES[_OPEN_QUOTES.index(body[0])]
    return f"\"{body}\""


_MARKED = re.compile(r"^(?:#{1,6}[ \t]+(?P<h>[^\n]+?)|\*\*(?P<b>[^*\n]+)\*\*)[ \t]*$")
_TITLE_LABEL = re.compile(r"^(?:title|标题)\s*[:：]\s*", re.I)


def _entitle(text: str, params: Mapping[str, Any]) -> str | None:
    """The text's own title put in <<>>: a first line that is a markdown heading or in bold,
    or a short first line with no sentence punctuation and a blank line after it; None when
    the text has no such line."""
    lines = text.strip().split("\n")
    if len(lines) < 2:
        return None
    first = lines[0].strip()
    marked = _MARKED.match(first)
    if marked:
        title = marked.group("h") or marked.group("b")
    elif lines[1].strip() == "" and not re.search(r"[.!?:;。！？：；]", first):
        title = first
    else:
        return None
    title = _TITLE_LABEL.sub("", title.strip(" *#")).strip()
    if not title or len(title.split()) > 12 or len(title) > 80:
        return None
    return "\n".join([f"<<{title}>>", *lines[1:]])


def _xml_tag(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    tag = re.escape(params["tag"].strip("<>/ "))
    opened = re.search(rf"<{tag}(?:\s[^>]*)?>", text) is not None
    closed = re.search(rf"</{tag}\s*>", text) is not None
    missing = [w for w, ok in (("opening", opened), ("closing", closed)) if not ok]
    return flag("xml_tag", not missing,
                f"no {' or '.join(missing)} tag" if missing else "both tags",
                f"the <{params['tag']}> ... </{params['tag']}> tags kept")


def _field_marker(text: str, params: Mapping[str, Any]) -> CheckOutcome:
    name = r"\s+".join(map(re.escape, params["name"].split()))
    found = re.search(rf"\[\[\s*##\s*{name}\s*##\s*\]\]", text) is not None
    return flag("field_marker", found, "the marker" if found else "no such marker",
                f"the field marker [[ ## {params['name']} ## ]] kept")


FORM_KINDS: dict[str, CheckKind] = {k.name: k for k in (
    CheckKind("keyword", "how often a word or phrase appears (case-insensitive)",
              params_schema(word=string(80), **COUNT_PROPS), _keyword),
    CheckKind("forbidden_word", "a word or phrase that must not appear",
              params_schema(word=string(80)), _forbidden),
    CheckKind("letter_frequency", "how often a letter appears (case-insensitive)",
              params_schema(letter=string(1), **COUNT_PROPS), _letter),
    CheckKind("lowercase", "the whole response in lowercase letters",
              NO_PARAMS, _lowercase, _lower),
    CheckKind("uppercase", "the whole response in capital letters",
              NO_PARAMS, _uppercase, _upper),
    CheckKind("no_commas", "no commas anywhere",
              NO_PARAMS, _no_commas, _drop_commas),
    CheckKind("starts_with", "the response opens with a phrase",
              params_schema(phrase=string()), _starts, _start),
    CheckKind("ends_with", "the response closes with a phrase, nothing after it",
              params_schema(phrase=string()), _ends, _end),
    CheckKind("quoted", "the whole response wrapped in double quotes",
              NO_PARAMS, _quoted, _wrap),
    CheckKind("title", "a title in double angular brackets, <<title>>",
              NO_PARAMS, _title, _entitle),
    CheckKind("postscript", "a postscript starting with a marker such as P.S.",
              params_schema(marker=string(20)), _postscript, _separate_postscript),
    CheckKind("json", "the whole response is valid JSON (a code fence around it allowed)",
              NO_PARAMS, _json),
    CheckKind("json_schema", "the response is JSON valid against a JSON Schema (given as text)",
              params_schema(schema=string(4000)), _json_schema),
    CheckKind("language", "the response is written in a language (a code: "
              + ", ".join(LANGUAGES) + ")",
              params_schema(language={"type": "string", "enum": list(LANGUAGES)}), _language),
    CheckKind("xml_tag", "the response keeps an XML tag pair the request dictates",
              params_schema(tag=string(40)), _xml_tag),
    CheckKind("field_marker", "the response keeps a [[ ## name ## ]] field marker",
              params_schema(name=string(40)), _field_marker),
)}
