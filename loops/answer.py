"""The answer is the text alone: what a rewrite's output loses before anyone sees it, and what
in it gives away the loop's own scaffolding.

Real models wrap a revision in a heading ("### Revised Announcement", "Here is the revised
text:"), fence prose in ``` and append notes about what they changed ("**Changes made:** ...",
"I removed unnecessary information ..."). `clean_answer` strips those deterministically.
What cannot be stripped — the rubric's band labels, the agents' or the reviser's prompt
sentences copied into the text — is reported by `scaffolding`, so that such a text loses to
one that is only an answer.

Which text is the answer (`best`) and whether the loop may stop on it (`finished`) is decided
here too, by the selection rule below: scaffolding first, then the content dimensions, with
the checks (requirements verified in code) as a bounded bonus.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from generation.conversation import detect_language
from generation.local.repeats import cut_repetition
from generation.types import REPETITION
from loops.trace import Candidate
from rubrics.checks import Check, pass_rate
from rubrics.checks.kinds import count_words

_HEADING_WORDS = (r"(revised|improved|updated|rewritten|final|edited|new|corrected)"
                  r"(\s+\w+){0,3}")
# A first line that only announces the answer: a markdown heading or bold line naming a
# revision, a "Here is ...:" / "Sure, ..." sentence ending the line, or a report that the
# answer meets the request (with a divider after it, if one follows).
_PREFACE = re.compile(
    r"^\s*(?:"
    r"#{1,6}\s*" + _HEADING_WORDS + r"\s*:?"
    r"|\*\*\s*" + _HEADING_WORDS + r"\s*:?\s*\*\*\s*:?"
    r"|" + _HEADING_WORDS + r"\s*:"
    r"|(?:sure|certainly|of course|okay|ok)\b[^\n]*"
    r"|(?:here is|here's|here are|below is|this is)\b[^\n]*"
    # "This answer meets your request for exactly 2 paragraphs. ..." (a report, not a part)
    r"|(?:this|the|my) (?:answer|response|text|revision) (?:meets|satisfies|fulfils|fulfills"
    r"|follows|now)\b[^\n]*(?:\n[ \t]*\n[ \t]*(?:\*{3}|-{3}|_{3})[ \t]*)?"
    r")\s*\n", re.IGNORECASE)
# "The revised answer is:" / "Revised version as follows:" before the text, on its line or not
_LEAD_IN = re.compile(
    r"^\s*(?:(?:the|my|an|here is the|here's the|here is my)\s+)?"
    r"(?:revised|improved|updated|rewritten|final|edited|new|corrected|original|draft|earlier)\s+"
    r"(?:answer|text|version|response|draft)(?:\s+is)?(?:\s+as follows)?\s*:[ \t]*\n?",
    re.IGNORECASE)
_FENCED = re.compile(r"^\s*```[\w-]*\n(.*?)\n?```\s*$", re.DOTALL)
# Where notes about the revision begin: a heading, bold or plain label naming the changes,
# or a sentence describing what was changed.
_NOTES = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*\s*|\(\s*)?(?:"
    r"(?:notes?|changes?(?: made)?|explanation|revisions?(?: made)?|what (?:i )?changed|"
    r"summary of (?:the )?changes|improvements?(?: made)?|key changes)\s*:?\s*(?:\*\*)?\s*:?"
    r"|(?:i|we) (?:have )?(?:revised|rewrote|removed|added|expanded|shortened|changed|kept|"
    r"made|improved|adjusted|updated|aim to)\b"
    r"|(?:this|the) (?:revised|revision|rewrite|new version|updated version|original text)\b"
    # "The new answer meets all the requested points:" (a report on the revision, after it)
    r"|(?:this|the) (?:new|updated|rewritten|above|original) (?:answer|text|response)\b"
    # "The draft meets the request:" (a verdict on the text revised, after the rewrite)
    r"|the (?:original )?draft (?:meets|met|misses|missed|fails|failed|satisfies|now)\b"
    r"|in (?:this|the) revised\b"
    r"|note:"
    r")"
    # "**Length Constraint:** We aim to keep ...": a label, then what was done about it
    r"|^\s*\*\*[^*\n]{1,60}\*\*\s*:?\s*(?:(?:i|we) (?:have )?(?:aim|revised|removed|added|"
    r"expanded|shortened|changed|kept|made|improved|adjusted|updated)\b|the original\b"
    r"|this (?:revision|rewrite)\b)", re.IGNORECASE)
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")

# Labels the rubric and the reviser use; an answer repeating them copies the machinery.
_LABELS = re.compile(
    r"\b(?:lowest|middle|highest|top|bottom) band\b|\bband \d+\b|\brevision objectives?\b"
    r"|\bthe reflection\b|\brubric\b|\bchecklist\b|\bscore[sd]? \d+\s*/\s*\d+"
    r"|\bthe task goal is\b|\brewrite actions?\b|\bweak dimensions?\b"
    r"|\bscale \d+\s*-\s*\d+,\s*weight\b",  # how the judge's prompt heads a dimension
    re.IGNORECASE)
SHINGLE = 6  # words: a run this long copied from a prompt is no accident


def clean_answer(text: str, original_fenced: bool = False) -> str:
    """The answer with a leading announcement, a fence around the whole text (unless the
    text it revises was fenced too) and trailing revision notes removed."""
    text = _strip_prefaces(text.strip())
    fenced = _FENCED.match(text)
    if fenced and not original_fenced:  # "```\nThe original text is:\n..." has one inside
        text = _strip_prefaces(fenced.group(1).strip())
    return _drop_notes(text).strip()


def _strip_prefaces(text: str) -> str:
    for _ in range(2):  # "Sure! ...\n### Revised text" stacks two prefaces
        stripped = _PREFACE.sub("", text, count=1)
        if stripped == text:
            stripped = _LEAD_IN.sub("", text, count=1)
        if stripped == text or not stripped.strip():
            break
        text = stripped.strip()
    return text


def _drop_notes(text: str) -> str:
    """Cut from the first line that starts notes about the revision, when a body precedes
    it; a rule line right before the notes goes too."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i == 0 or not _NOTES.match(line):
            continue
        body = lines[:i]
        while body and (not body[-1].strip() or _RULE.match(body[-1])):
            body.pop()
        if body:
            return "\n".join(body)
    return text


def scaffolding(answer: str, allowed: str, hidden: str = "") -> list[str]:
    """What in `answer` repeats the loop's machinery: rubric labels, runs of `SHINGLE` words
    copied from the loop's prompt templates, and whole lines of `hidden` (the reflection and
    the history the reviser was shown: a rewrite may carry out "Add two more tips", but a
    line that is that instruction is no answer). Whatever also occurs in `allowed` (the
    user's request and the text being revised) is the answer's own and is not counted."""
    lowered = allowed.lower()
    found = [m.group(0).lower() for m in _LABELS.finditer(answer)
             if m.group(0).lower() not in lowered]
    own = _shingles(allowed)
    for gram in _shingles(answer) & _prompt_shingles():
        if gram not in own:
            found.append(" ".join(gram))
    copied = _lines(hidden) - _lines(allowed)
    found.extend(" ".join(line) for line in _lines(answer) & copied)
    headings = _prompt_headings() - {tuple(_words(line)) for line in allowed.splitlines()}
    found.extend(" ".join(line) for line in {tuple(_words(x)) for x in answer.splitlines()}
                 & headings)
    return sorted(set(found))


def _lines(text: str) -> set[tuple[str, ...]]:
    """The lines of `text` of three words or more, as word tuples (bullets and case gone)."""
    return {words for line in text.splitlines() if len(words := tuple(_words(line))) >= 3}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


@cache
def _prompt_headings() -> frozenset[tuple[str, ...]]:
    """The headings of two words or more that frame the loop's prompts ("Draft answer:"): a
    line of the answer that is one copies the frame."""
    found: set[tuple[str, ...]] = set()
    for text in _prompt_texts():
        for line in text.splitlines():
            if _HEADING.match(line) and len(words := tuple(_words(line))) >= 2:
                found.add(words)
    return frozenset(found)


_HEADING = re.compile(r"^\s*[A-Z][\w ]{0,40}:\s*$")


def _prompt_texts() -> list[str]:
    """Every prompt template the loop, the rubric agents and the memory selector send."""
    return [item.read_text("utf-8") for package in ("loops", "rubrics", "memory")
            for item in resources.files(package).joinpath("prompts").iterdir()
            if item.name.endswith(".txt")]


@cache
def _prompt_shingles() -> frozenset[tuple[str, ...]]:
    """Word runs of every prompt the loop, the rubric agents and the memory selector send."""
    grams: set[tuple[str, ...]] = set()
    for text in _prompt_texts():
        grams |= _shingles(re.sub(r"\$\{?\w+\}?", " ", text))
    return frozenset(grams)


# A text stuck repeating itself ("It is a task. It is a task. ..." until the token limit, as
# a small model does) reads as broken whatever score a judge gives it: most of its runs of
# LOOP_NGRAM words (or CJK characters) are repeats.
LOOP_NGRAM = 6
LOOP_MIN_TOKENS = 40
LOOP_DISTINCT = 0.5
LOOP_REPEATS = 4
# A short text loops too when it has only a few words, over and over ("Pizza, a pizza, a
# pizza, ..." from a 1.5B reviser told not to say "cheese"): SHORT_LOOP_TOKENS tokens or
# more, under SHORT_LOOP_DISTINCT of them distinct. A refrain sung twice stays above it.
SHORT_LOOP_TOKENS = 12
SHORT_LOOP_DISTINCT = 0.25
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+")


def unlooped(text: str, finish_reason: str | None) -> tuple[str, str | None]:
    """An upstream's answer with a tail that repeats itself cut after its first unit
    (`generation.local.repeats`), and its finish reason (REPETITION once cut)."""
    cut, repeated = cut_repetition(text)
    return (cut, REPETITION) if repeated else (text, finish_reason)


def looping(text: str) -> bool:
    """Does the text loop on itself: of its runs of LOOP_NGRAM tokens, numbers left out,
    under LOOP_DISTINCT are distinct and one of them comes at least LOOP_REPEATS times
    (texts under LOOP_MIN_TOKENS tokens never loop). A refrain, a repeated heading or a
    passage quoted twice stays clear of that; a model repeating one sentence falls far below,
    and so does one counting up ("* A (2)", "* A (3)", ... to its token limit), while a
    table of figures has few words to repeat. A text of SHORT_LOOP_TOKENS tokens or more with
    under SHORT_LOOP_DISTINCT of them distinct loops whatever its length."""
    every = _TOKEN.findall(text.lower())
    tokens = [t for t in every if not t.isdigit()]
    if len(tokens) >= SHORT_LOOP_TOKENS and len(set(tokens)) < SHORT_LOOP_DISTINCT * len(tokens):
        return True
    if len(every) < LOOP_MIN_TOKENS:
        return False
    grams = Counter(tuple(tokens[i:i + LOOP_NGRAM]) for i in range(len(tokens) - LOOP_NGRAM + 1))
    total = sum(grams.values())
    return len(grams) < LOOP_DISTINCT * total and max(grams.values()) >= LOOP_REPEATS


# A rewrite asked for one more sentence, item or highlighted span can meet the count by
# writing a sentence or a line of the text a second time ("School IS A PLACE WHERE STUDENTS
# LEARN AND GROW." twice for "two sentences"): the count is met, the request is not.
PAD_WORDS = 4
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")


def _repeated(text: str) -> set[tuple[str, ...]]:
    """The sentences and lines of PAD_WORDS words or more that `text` has more than once."""
    lines = Counter(tuple(_words(line)) for line in text.splitlines())
    sentences = Counter(tuple(_words(p)) for p in _SENTENCE.findall(text))
    return {w for w, n in (lines | sentences).items() if n > 1 and len(w) >= PAD_WORDS}


def off_language(text: str, revised: str, request: str = "") -> bool:
    """Is `text` (a rewrite) written in another language than `revised` (its parent), or
    does a rewrite of a Chinese text bring in a phrase of FOREIGN_RUN or more English words
    that neither its parent nor the `request` has ("绿茶是用 leaves of Camellia sinensis植物制成的"
    from a 1.5B reviser told to shorten it: fewer Chinese characters, no shorter a text)?"""
    was, now = detect_language(revised), detect_language(text)
    if was is not None and now is not None and was != now:
        return True
    if was != "zh":
        return False
    known = f"{revised}\n{request}".lower()
    return any(run.lower() not in known for run in _LATIN_RUN.findall(text))


FOREIGN_RUN = 3
_LATIN_RUN = re.compile(rf"[A-Za-z]+(?:[ \t]+[A-Za-z]+){{{FOREIGN_RUN - 1},}}")


def padded(text: str, revised: str, draft: str | None = None) -> tuple[str, ...]:
    """The sentences or lines `text` (a rewrite) repeats that `revised` (its parent) did
    not: a count met by saying something twice. A refrain the parent had is its own when
    the `draft` the loop started from had it too: padding a rewrite brought in stays padding
    in the rewrites of that rewrite."""
    own = _repeated(revised)
    if draft is not None:
        own &= _repeated(draft)
    return tuple(sorted(" ".join(w) for w in _repeated(text) - own))


# -- selection: which candidate is y*, and when the loop may stop ---------------------------
#
# rank(c) = content(c) + CHECK_WEIGHT x pass_rate(c)      for an ordinary candidate
# rank(c) = content(c) - SHRINK_PENALTY                     for a shrunk rewrite
#
# content is the judge's normalised score over the checklist's dimensions, in [0, 1]; the
# pass rate is the share of the checklist's checks the text passes (1.0 when it has none).
# So checks break ties and near-ties, but a content lead of more than CHECK_WEIGHT is never
# overturned by passing checks: a fragment that meets a format requirement does not beat the
# text the user asked for. A rewrite that keeps under SHRINK_RATIO of the words of the text
# it revised (when the request did not ask for a shorter text) gets no credit for its checks
# and has to beat the longer texts on content alone by more than SHRINK_PENALTY; it cannot
# end the loop at the threshold either, and the next round revises the text it shrank, not
# it. Ranks are compared with the scaffolding rule first (a text repeating the loop's
# machinery loses to any that does not), the earliest candidate wins an exact tie, and an
# unevaluated candidate never wins over an evaluated one. A text that loops on itself
# (`looping`), a rewrite that says a sentence twice its parent said once (`padded`) and one
# in another language than its parent (`off_language`) or off the topic its parent kept
# (`off_topic`) count as unclean like one repeating scaffolding: each loses to any text that
# is clean, and the loop never stops on it.
#
# Machine-read formats are the exception to "checks never outweigh content": a text that a
# program reads (JSON, JSON valid against the request's schema, XML tags, [[ ## field ## ]]
# markers: MACHINE_READ) is useless to it once the format breaks. So a candidate that fails
# a machine-read check the draft passes is never y*, whatever its content (`breaks_format`);
# the draft itself is always eligible.
#
# The loop stops at the threshold only on a y* whose content reaches tau, that passes every
# check and that is not a shrunk rewrite (`finished`).

CHECK_WEIGHT = 0.05
MACHINE_READ = frozenset({"json", "json_schema", "xml_tag", "field_marker"})
SHRINK_RATIO = 0.5
SHRINK_PENALTY = 0.25

_SHORTER = re.compile(
    r"\b(?:shorter|shorten|condense|condensed|trim|cut (?:it |this )?down|more concise|"
    r"briefer|summari[sz]e|summary|tl;?dr|reduce|fewer words|compress|abridge|"
    r"in (?:one|a single|two|three|1|2|3) (?:sentence|line|word|paragraph)s?)\b"
    r"|缩短|精简|简短|压缩|概括|缩写|删减", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Rank:
    """A candidate's place in the selection order (see the rule above)."""

    clean: bool       # no scaffolding, looping, padding or change of language
    value: float      # content + check bonus, or content - shrink penalty

    @property
    def key(self) -> tuple[bool, float]:
        return self.clean, self.value


def rank(cand: Candidate) -> Rank | None:
    """None for a candidate that was never evaluated."""
    if cand.score is None:
        return None
    clean = not (cand.scaffolding or cand.looping or cand.padded or cand.off_language
                 or cand.off_topic)
    if cand.shrunk:
        return Rank(clean, cand.score - SHRINK_PENALTY)
    return Rank(clean, cand.score + CHECK_WEIGHT * pass_rate(cand.checks))


def breaks_format(cand: Candidate, draft: Candidate, strict: bool = False) -> bool:
    """Does `cand` fail a machine-read format check that `draft` passes (any check, when
    `strict`)? (Every candidate of a loop runs the same checks in the same order.)"""
    return any(d.passed and not c.passed and (strict or c.kind in MACHINE_READ)
               for d, c in zip(draft.checks, cand.checks, strict=False))


def best(candidates: Sequence[Candidate], strict: bool = False) -> Candidate:
    """y*: the candidate of highest rank that keeps every machine-read format the draft kept
    (every check the draft passed, when `strict`: the loop scored by the request's checks)
    when the first candidate is the draft; the earliest wins a tie; the first if none was
    evaluated."""
    top, top_rank = candidates[0], rank(candidates[0])
    draft = top if top.kind == "draft" else None
    for cand in candidates[1:]:
        if draft is not None and breaks_format(cand, draft, strict):
            continue
        r = rank(cand)
        if r is not None and (top_rank is None or r.key > top_rank.key):
            top, top_rank = cand, r
    return top


def finished(cand: Candidate, threshold: float) -> bool:
    """May the loop stop at tau on this text: content reaches tau, every check passes, it
    does not loop on itself, say a sentence twice that its parent said once or leave its
    parent's language or topic, and it is not a shrunk rewrite that has still to earn its
    scores."""
    return (cand.score is not None and cand.score >= threshold and not cand.shrunk
            and not (cand.looping or cand.padded or cand.off_language or cand.off_topic)
            and all(o.passed for o in cand.checks))


def asks_shorter(request: str, checks: Iterable[Check], words: int) -> bool:
    """Did the request ask for a shorter text than one of `words` words: by its wording
    ("shorten", "in one sentence", 缩短 ...) or by a word-count check whose upper bound is
    below that."""
    if _SHORTER.search(request):
        return True
    for check in checks:
        if check.kind != "word_count":
            continue
        params = check.params
        relation, n = params.get("relation"), params.get("n")
        upper = params.get("upper") if relation == "between" else n
        if relation in ("at most", "exactly", "between") and isinstance(upper, int) \
                and upper < words:
            return True
    return False


def shrank(text: str, revised: str, request: str, checks: Iterable[Check]) -> bool:
    """A rewrite that keeps under SHRINK_RATIO of the words of the text it revised, when the
    request did not ask for a shorter text."""
    before = count_words(revised)
    if before == 0 or count_words(text) >= SHRINK_RATIO * before:
        return False
    return not asks_shorter(request, checks, before)
