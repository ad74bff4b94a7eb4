"""A text built to meet a set of checks: for the prompt generator's tests, the proof that a
combination of requirements the rules let through can be met by some text.

The text is plain filler around what the checks ask for (the opening and closing phrase,
the title, keyword repeats, highlighted and capitalised words, placeholders, list items,
sections, a postscript), laid out as prose (sentences in paragraphs), as a structure (an
opening sentence, then sections, headings or a list) or as JSON; then quoted and set in one
case if asked. Sentence and paragraph counts are searched; every candidate is run through
the checks themselves, and the first that passes all is returned."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence

from rubrics.checks import Check, run_checks
from rubrics.checks.counts import count_words
from rubrics.checks.forms import occurrences
from training.data.requirements.rules import STRUCTURE, bounds, capital_words, literals

FILLER = {"en": "we walk past the old harbour and see boats in the calm water",
          "fr": "le chat dort dans la maison avec nous et les enfants sont sur le pont",
          "es": "el perro duerme en la casa con los amigos y las flores del campo",
          "de": "der hund ist in dem garten und die kinder sind mit uns auf dem weg"}


def _filler(by: dict[str, Check]) -> list[str]:
    language = by["language"].params["language"] if "language" in by else "en"
    words = FILLER[language].split()
    banned = [by[k].params["word"] for k in ("forbidden_word", "keyword") if k in by]
    letter = by["letter_frequency"].params["letter"] if "letter_frequency" in by \
        and by["letter_frequency"].params["relation"] == "at most" else None
    return [w for w in words if not any(occurrences(w, b) for b in banned)
            and (letter is None or letter not in w)]


def _low(by: dict[str, Check], kind: str) -> int:
    return bounds(by[kind])[0] if kind in by else 0


def _specials(by: dict[str, Check], words: Iterator[str], letters: int) -> list[str]:
    """The tokens the checks ask the text to hold, beyond what required phrases bring."""
    forced = [t for c in by.values() for t in literals(c) if c.kind != "keyword"]
    out: list[str] = []
    if "keyword" in by:
        word = by["keyword"].params["word"]
        out += [word] * max(0, _low(by, "keyword") - sum(occurrences(t, word) for t in forced))
    out += [f"*{next(words)}*" for _ in range(_low(by, "highlight_count"))]
    out += [f"[{next(words)}]" for _ in range(_low(by, "placeholder_count"))]
    capitals = sum(capital_words(t) for t in forced)
    out += [next(words).upper() for _ in range(_low(by, "capital_word_count") - capitals)]
    if letters:
        out.append(by["letter_frequency"].params["letter"] * letters)
    return out


def _sentences(by: dict[str, Check], count: int, tokens: list[str], pad: int,
               words: Iterator[str], close: bool = True) -> list[str]:
    """`count` sentences holding the tokens and `pad` more filler words; the first opens with
    the opening phrase and the title, the last closes with the closing phrase (if `close`)."""
    parts: list[list[str]] = [[next(words), next(words)] for _ in range(count)]
    for i, token in enumerate(tokens):
        parts[i % count].append(token)
    parts[0] += [next(words) for _ in range(pad)]
    if "title" in by:
        parts[0].insert(0, "<<calm title>>")
    if "starts_with" in by:
        parts[0].insert(0, by["starts_with"].params["phrase"])
    out = [" ".join(p) + "." for p in parts]
    if close and "ends_with" in by:
        out[-1] = out[-1][:-1] + " " + by["ends_with"].params["phrase"]
    return out


def _layout(by: dict[str, Check], sentences: int, paragraphs: int, tokens: list[str],
            pad: int) -> str:
    words = itertools.cycle(_filler(by) or ["ok"])
    if "json" in by:
        return json.dumps({"text": " ".join(_sentences(by, 1, tokens, pad, words))})
    if any(k in by for k in STRUCTURE):
        blocks = _sentences(by, 1, tokens, pad, words, close=False)
        if "section_count" in by:
            marker = by["section_count"].params["marker"]
            blocks += [f"{marker} {i + 1}\n{next(words)} {next(words)}."
                       for i in range(_low(by, "section_count"))]
        blocks += [f"# {next(words)} {next(words)}\n{next(words)} {next(words)}."
                   for _ in range(_low(by, "heading_count"))]
        if "bullet_count" in by:
            blocks.append("\n".join(f"- {next(words)} {next(words)}"
                                    for _ in range(_low(by, "bullet_count"))))
        if "numbered_count" in by:
            blocks.append("\n".join(f"{i + 1}. {next(words)} {next(words)}"
                                    for i in range(_low(by, "numbered_count"))))
        if "ends_with" in by:
            blocks.append(by["ends_with"].params["phrase"])
        text = "\n\n".join(blocks)
    else:
        said = _sentences(by, sentences, tokens, pad, words)
        cuts = [round(i * len(said) / paragraphs) for i in range(paragraphs + 1)]
        groups = [" ".join(said[a:b]) for a, b in itertools.pairwise(cuts)]
        divider = by["paragraph_count"].params["divider"] if "paragraph_count" in by else None
        text = f"\n{divider}\n".join(groups) if divider else "\n\n".join(groups)
    if "postscript" in by:
        text += f"\n{by['postscript'].params['marker']} {next(words)} {next(words)}."
    return text


def _finish(by: dict[str, Check], text: str) -> str:
    if "quoted" in by:
        text = f"\"{text}\""
    if "lowercase" in by:
        text = text.lower()
    if "uppercase" in by:
        text = text.upper()
    return text


def _built(by: dict[str, Check], sentences: int, paragraphs: int, pad: int,
           letters: int) -> str:
    words = itertools.cycle(_filler(by) or ["ok"])
    tokens = _specials(by, words, letters)
    return _finish(by, _layout(by, sentences, paragraphs, tokens, pad))


def satisfy(checks: Sequence[Check]) -> str | None:
    """A text meeting every check, or None when none of the layouts tried does."""
    by = {c.kind: c for c in checks}
    letter = by.get("letter_frequency")
    for sentences in range(1, 13):
        for paragraphs in range(1, min(sentences, 6) + 1):
            letters = 0
            if letter and letter.params["relation"] == "at least":
                have = _built(by, sentences, paragraphs, 0, 0).casefold().count(
                    letter.params["letter"])
                letters = max(0, letter.params["n"] - have)
            text = _built(by, sentences, paragraphs, 0, letters)
            if "word_count" in by:
                low, high = bounds(by["word_count"])
                pad = max(0, low - count_words(text))
                text = _built(by, sentences, paragraphs, pad, letters)
                if count_words(text) > high:
                    continue
            if all(o.passed for o in run_checks(text, checks)):
                return text
    return None
