"""Numbers as requests write them: digits with thousands separators, English number words
(a pair of, two dozen), Chinese numerals (八百, 三千五百, 两万, 1.5万); and the tolerance an
approximate length gets."""

from __future__ import annotations

import math
import re

_EN = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_EN.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "hundred": 100,
            "a hundred": 100, "a thousand": 1000, "single": 1, "a single": 1, "a dozen": 12,
            "half a dozen": 6, "a pair of": 2})
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
             "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}

_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_UNITS = {w: i for w, i in _EN.items() if 0 < i < 20 and " " not in w and w != "single"}
_UNIT_WORD = "|".join(sorted(_UNITS, key=len, reverse=True))
_TEN_WORD = "|".join(_TENS)
# "twenty-five", "two hundred", "one hundred and fifty", "a hundred and twenty", "three thousand",
# "a couple hundred" (two hundred)
_BELOW_100 = rf"(?:(?:{_TEN_WORD})(?:[\s-](?:{_UNIT_WORD}))?|(?:{_UNIT_WORD}))"
_A_COUPLE = r"a\s+couple(?:\s+of)?"
EN_COMPOUND = (rf"(?:(?:(?:{_UNIT_WORD}|{_A_COUPLE}|a)\s+hundred(?:\s+(?:and\s+)?{_BELOW_100})?|"
               rf"(?:{_UNIT_WORD}|a)\s+thousand(?:\s+(?:and\s+)?{_BELOW_100})?|"
               rf"(?:{_TEN_WORD})[\s-](?:{_UNIT_WORD})|(?:{_TEN_WORD}))\b(?![\s-]+(?:hundred|"
               r"thousand)\b))")
# dozens: "two dozen", "3 dozen" (before the bare number, which would leave "dozen" behind)
_DOZENS = rf"(?:\d+|{_UNIT_WORD})\s+dozen\b"
# (a number starts a word, with a character a number can start with: the lookaround spares the
# long alternation at every other position of a text)
EN_NUMBER = (r"(?<![A-Za-z])(?=[\dzotfsenhaZOTFSENHA])"
             rf"(?:{_DOZENS}|\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?\s*[kK]\b|\d+|" + EN_COMPOUND + "|"
             + "|".join(sorted((re.escape(w) for w in _EN), key=len, reverse=True)) + ")")
ZH_NUMBER = r"(?:\d+(?:\.\d+)?\s*万|\d+|[零〇一二两三四五六七八九十百千万]+)"

# "about N" becomes "between N - 20% and N + 20%": wide enough for what a reader accepts as
# "about" a length, and what WritingBench's length criteria give full marks to.
TOLERANCE = 0.2


def about(n: int) -> tuple[int, int]:
    """The bounds an approximate count N gets: floor(0.8 N) .. ceil(1.2 N)."""
    return math.floor(n * (1 - TOLERANCE)), math.ceil(n * (1 + TOLERANCE))


def _zh_below_10000(text: str) -> int:
    total, digit = 0, None
    for ch in text:
        if ch in _ZH_DIGIT:
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            total += (1 if digit is None else digit) * _ZH_UNIT[ch]
            digit = None
    return total + (digit or 0)


def _en_words(raw: str) -> int | None:
    """The value of English number words ("two hundred and fifty", "twenty-five")."""
    total, current = 0, 0
    for word in re.split(r"[\s-]+", raw):
        if word in ("and", "of", ""):
            continue
        if word == "a":
            current = current or 1
        elif word == "couple":
            current = 2
        elif word in _UNITS or word in _TENS:
            current += _UNITS.get(word) or _TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total, current = total + (current or 1) * 1000, 0
        else:
            return None
    return total + current


def to_int(text: str) -> int | None:
    """The integer a number in a request means, or None if it is not one."""
    raw = " ".join(text.strip().lower().split())
    if raw in _EN:
        return _EN[raw]
    if re.fullmatch(rf"{EN_COMPOUND}", raw):
        return _en_words(raw)
    dozens = re.fullmatch(r"(\S+)\s+dozen", raw)
    if dozens:
        n = to_int(dozens.group(1))
        return None if n is None else n * 12
    compact = raw.replace(",", "").replace(" ", "")
    if compact.endswith("k") and re.fullmatch(r"\d+(\.\d+)?k", compact):
        return round(float(compact[:-1]) * 1000)
    if compact.endswith("万") and re.fullmatch(r"\d+(\.\d+)?万", compact):
        return round(float(compact[:-1]) * 10000)
    if re.fullmatch(r"\d+", compact):
        return int(compact)
    if compact and all(c in _ZH_DIGIT or c in _ZH_UNIT or c == "万" for c in compact):
        high, _, low = compact.rpartition("万")
        if "万" in compact:
            return (_zh_below_10000(high) or 1) * 10000 + _zh_below_10000(low)
        return _zh_below_10000(compact)
    return None
