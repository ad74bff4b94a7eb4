"""The phrasings the pre-pass knows: one regex per way of stating a requirement, each with
the function that turns its match into (kind, params), kept in one module per family of
kinds, in English and Chinese alike:

- `lengths`: word_count, char_count;
- `characters`: char_count asked in English for a Chinese response ("under 30 Chinese
  characters", "Length: 120–150 characters" beside "Language: Chinese");
- `letters`: letter_frequency;
- `parts`: paragraph_count, sentence_count, section_count (and other units counted the same
  way: "in 5 bullet points", "3 headings", "3 placeholders");
- `sections`: section_count with a marker ("4 parts, each beginning with 'PART X'");
- `lists`: bullet_count, numbered_count, heading_count;
- `case`: lowercase, uppercase, capital_word_count;
- `edges`: starts_with, ends_with;
- `language`: language; `languages.people`: language named by the people the text is for
  ("for my Brazilian readers, in their language");
- `keywords` (English) and `keywords_zh` (Chinese and mixed): keyword, forbidden_word;
- `marks`: placeholder_count, highlight_count;
- `formats`: no_commas, postscript, json, xml_tag, field_marker, quoted, title.

Two modules read by name, recall first, and run only where the modules above read nothing of
their kind (`NAMED`): `languages.named`, a language named in a clause that governs the response
("some tips on sleeping better in Greek?", "my grandmother speaks only Tamil, write her a
note"), and `words.case_named`, a case named for the whole response ("make the announcement
capital letters", "not one capital anywhere"), each with its structural exclusions (a
translation target, a topic, a part, a count of words, the user's own text...).

Each module's rules are rows of its `TABLES`: a `Phrasing` holds the pattern, how its match
is read, the kind, an example it must read and a near miss it must not. The pieces the
modules share are in `shared`, the count structures of the noun families and list styles in
`families`; whose a reading is (the response's, a part's, a question's, another text's) is
`rubrics.checks.scope`'s. The pre-pass tries every rule on
every request and orders what they find by position, so the order below is no precedence."""

from __future__ import annotations

from types import ModuleType

from rubrics.checks.phrasings import (
    characters,
    edges,
    formats,
    language,
    lengths,
    lists,
    marks,
    parts,
    sections,
)
from rubrics.checks.phrasings.languages import named as language_named
from rubrics.checks.phrasings.languages import people as language_people
from rubrics.checks.phrasings.shared import Build, Matcher
from rubrics.checks.phrasings.words import case, case_named, keywords, keywords_zh, letters
from rubrics.checks.phrasings.words.case import PART_OF

# the modules whose rules the pre-pass runs, by kind family
MODULES: tuple[ModuleType, ...] = (lengths, characters, letters, parts, sections, lists, marks,
                                   formats, language, language_people, case, edges, keywords,
                                   keywords_zh)

RULES: tuple[tuple[Matcher, Build], ...] = tuple(rule for module in MODULES
                                                 for rule in module.RULES)

# the modules read by name, each with the kinds whose reading by the modules above it waits on:
# it runs only where they read none of them
NAMED: tuple[tuple[frozenset[str], ModuleType], ...] = (
    (frozenset({"language"}), language_named),
    (frozenset({"lowercase", "uppercase"}), case_named))

__all__ = ["MODULES", "NAMED", "PART_OF", "RULES"]
