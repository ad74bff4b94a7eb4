"""Whether a judge's evidence comes from the text it judged.

The judge is asked to quote the response verbatim, or to say briefly what is missing. Small
judges instead paste the rubric's band description or invent a sentence; such evidence
justifies nothing, so it is re-asked once and, if it still is not in the text, kept with a
visible flag.
"""

from __future__ import annotations

import re

FLAG = "(not found in the response) "
RUN = 4  # words in a row that must occur in the text for evidence to count as a quote
_MISSING = re.compile(r"\b(?:missing|lacks?|lacking|absent|omits?|omitted|no|not|none|never|"
                      r"without|fails?|does ?n[o']t|doesn't|nothing)\b|缺|没有|未", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def quoted(evidence: str, text: str) -> bool:
    """True when `evidence` quotes `text` (a run of `RUN` words found in it), says what is
    missing, or is too short to check; False for anything else."""
    said = _words(evidence)
    if len(said) < RUN and not re.search(r"[\u4e00-\u9fff]", evidence):
        return True  # a word or three: too short to tell a quote from a label
    body = " " + " ".join(_words(text)) + " "
    if any(f" {' '.join(said[i:i + RUN])} " in body for i in range(len(said) - RUN + 1)):
        return True
    if re.search(r"[\u4e00-\u9fff]", evidence):  # no word boundaries: a 6-character run
        compact, plain = re.sub(r"\s+", "", evidence), re.sub(r"\s+", "", text)
        if any(compact[i:i + 6] in plain for i in range(max(1, len(compact) - 5))):
            return True
    return bool(_MISSING.search(evidence))


def unquoted(evidence: dict[str, str], text: str) -> list[str]:
    """The names whose evidence does not come from `text`, in order."""
    return [name for name, said in evidence.items() if not quoted(said, text)]


def retry_note(names: list[str]) -> str:
    return ("the evidence for " + ", ".join(repr(n) for n in names) + " is not quoted from the "
            "response: quote the response's own words verbatim, or say briefly what is missing")
