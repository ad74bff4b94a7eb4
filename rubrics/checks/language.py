"""An offline language detector for the response-language check: the script decides Chinese,
Japanese, Korean and Russian; among Latin-script languages, the most frequent stopwords win.

Good enough to tell which of the supported languages a response of a sentence or more is
written in; not meant for single words or mixed-language text."""

from __future__ import annotations

import re
from collections import Counter

LANGUAGES = ("en", "zh", "fr", "de", "es", "ja", "ko", "ru", "it", "pt")
NAMES = {"en": "English", "zh": "Chinese", "fr": "French", "de": "German", "es": "Spanish",
         "ja": "Japanese", "ko": "Korean", "ru": "Russian", "it": "Italian", "pt": "Portuguese"}

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-zÀ-ÿ]")
_TOKEN = re.compile(r"[a-zà-ÿ']+")

STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the and of to is in that it for you with was are this on be have not "
                    "they but what at from by we or an which would".split()),
    "fr": frozenset("le la les et des est une un que qui dans pour pas sur au du ne se ce "
                    "avec nous vous sont il elle mais où".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den mit sich des auf für im dem "
                    "auch es wir ich sie werden sind".split()),
    "es": frozenset("el la los las y es en que de un una por con para no se del al lo como "
                    "más pero sus le fue está".split()),
    "it": frozenset("il lo la gli le e è di che un una per con non sono del della nel anche "
                    "ma come più questo".split()),
    "pt": frozenset("o a os as e é de que um uma para com não em do da no na mas por são "
                    "foi você isso".split()),
}


def detect(text: str) -> str | None:
    """The language code of `text` (one of LANGUAGES), or None when there is no letter."""
    han, kana, hangul = len(_HAN.findall(text)), len(_KANA.findall(text)), \
        len(_HANGUL.findall(text))
    cyrillic, latin = len(_CYRILLIC.findall(text)), len(_LATIN.findall(text))
    scripts = {"cjk": han + kana, "ko": hangul, "ru": cyrillic, "latin": latin}
    if not any(scripts.values()):
        return None
    # a CJK character carries about as much as a short Latin word: weigh it so
    top = max(scripts, key=lambda s: scripts[s] * (3 if s in ("cjk", "ko") else 1))
    if top == "cjk":
        return "ja" if kana >= max(5, (han + kana) * 0.1) else "zh"
    if top != "latin":
        return top
    votes = Counter(_TOKEN.findall(text.lower()))
    scores = {lang: sum(votes[w] for w in words) for lang, words in STOPWORDS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] else "en"
