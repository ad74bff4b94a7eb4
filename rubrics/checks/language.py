"""An offline language detector for the response-language check: the script decides most
languages (Chinese, Japanese, Korean, Thai, Greek, Hebrew, the Indic scripts...); within a
script several languages share (Latin, Cyrillic, Arabic, Devanagari), letters only one of
them uses, then the most frequent stopwords, decide.

Good enough to tell which of the supported languages a response of a sentence or more is
written in; not meant for single words or mixed-language text."""

from __future__ import annotations

import re
from collections import Counter

NAMES = {"en": "English", "zh": "Chinese", "fr": "French", "de": "German", "es": "Spanish",
         "ja": "Japanese", "ko": "Korean", "ru": "Russian", "it": "Italian", "pt": "Portuguese",
         "nl": "Dutch", "sv": "Swedish", "fi": "Finnish", "pl": "Polish", "tr": "Turkish",
         "vi": "Vietnamese", "id": "Indonesian", "sw": "Swahili", "uk": "Ukrainian",
         "bg": "Bulgarian", "el": "Greek", "he": "Hebrew", "ar": "Arabic", "fa": "Persian",
         "ur": "Urdu", "hi": "Hindi", "mr": "Marathi", "ne": "Nepali", "bn": "Bengali",
         "pa": "Punjabi", "gu": "Gujarati", "ta": "Tamil", "te": "Telugu", "kn": "Kannada",
         "ml": "Malayalam", "th": "Thai"}
LANGUAGES = tuple(NAMES)

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
# scripts one supported language writes in alone
_SCRIPTS = {"ko": r"\uac00-\ud7af\u1100-\u11ff", "th": r"\u0e00-\u0e7f",
            "el": r"\u0370-\u03ff", "he": r"\u0590-\u05ff", "bn": r"\u0980-\u09ff",
            "pa": r"\u0a00-\u0a7f", "gu": r"\u0a80-\u0aff", "ta": r"\u0b80-\u0bff",
            "te": r"\u0c00-\u0c7f", "kn": r"\u0c80-\u0cff", "ml": r"\u0d00-\u0d7f",
            # scripts several supported languages share: told apart below
            "cyrillic": r"\u0400-\u04ff", "arabic": r"\u0600-\u06ff\u0750-\u077f",
            "devanagari": r"\u0900-\u097f", "latin": r"A-Za-z\u00c0-\u024f\u1e00-\u1eff"}
_SCRIPT = {name: re.compile(f"[{chars}]") for name, chars in _SCRIPTS.items()}
# a word: what lies between spaces, digits and punctuation (Indic vowel signs are not \w)
_TOKEN = re.compile(r"[^\s\d.,;:!?¿¡\"'()\[\]{}«»“”‘’„/\\–—-]+")
# letters of a shared script that one of its languages alone uses
_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")
_RUSSIAN = re.compile(r"[ыэёЫЭЁ]")
_URDU = re.compile(r"[ٹڈڑںےۓ]")
_PERSIAN = re.compile(r"[پچژگی]")
_VIETNAMESE = re.compile(r"[ơưđƠƯĐạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]")

STOPWORDS: dict[str, frozenset[str]] = {lang: frozenset(words.split()) for lang, words in {
    "en": "the and of to is in that it for you with was are this on be have not they but "
          "what at from by we or an which would",
    "fr": "le la les et des est une un que qui dans pour pas sur au du ne se ce avec nous "
          "vous sont il elle mais où",
    "de": "der die das und ist nicht ein eine zu den mit sich des auf für im dem auch es wir "
          "ich sie werden sind",
    "es": "el la los las y es en que de un una por con para no se del al lo como más pero "
          "sus le fue está",
    "it": "il lo la gli le e è di che un una per con non sono del della nel anche ma come "
          "più questo",
    "pt": "o a os as e é de que um uma para com não em do da no na mas por são foi você isso",
    "nl": "het een en van is dat op te zijn met voor niet ook er maar om aan bij ik je wij "
          "hij zij dit die",
    "sv": "och att det som en är på av för med den till inte har jag vi ett om var men så",
    "fi": "ja on ei se että oli hän mutta kun niin myös tai ovat tämä joka ole kanssa sen",
    "pl": "i w na nie się z do to że jest jak po co tak są dla ale od przez jego",
    "tr": "ve bir bu da de için ile çok ne gibi olarak daha ama mi değil olan var sonra",
    "vi": "và của là có không những được một các cho trong người này với đã khi",
    "id": "yang dan di ini itu dengan untuk dari tidak akan ada pada juga saya kami mereka",
    "sw": "na ya wa kwa ni za katika la ili kuwa hii au cha vya pia lakini sana",
    "hi": "है हैं और का की के में से को यह नहीं था थी भी एक पर लिए",
    "mr": "आहे आहेत आणि हे ते या व की ला मध्ये होते नाही एक पण",
    "ne": "छ छन् र हो को मा लाई पनि गर्न थियो यो त्यो एक भन्ने",
    "ru": "и в не на я что он с как а то все она так его но ты к у же вы бы по это был",
    "bg": "и на за се е да от в с не са по като това той тя ще бъде съм беше към във",
}.items()}
# the languages a shared script may be, the first one the default
_SHARED = {"latin": ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "fi", "pl", "tr", "vi",
                     "id", "sw"),
           "devanagari": ("hi", "mr", "ne")}
# a CJK character or a syllable of a syllabic script carries about as much as a short word
_HEAVY = {"cjk", "ko", "th", "bn", "pa", "gu", "ta", "te", "kn", "ml", "devanagari"}


def _by_stopwords(text: str, languages: tuple[str, ...]) -> str:
    """The language among `languages` whose stopwords `text` uses most; the first if none."""
    votes = Counter(_TOKEN.findall(text.lower()))
    scores = {lang: sum(votes[w] for w in STOPWORDS[lang]) for lang in languages}
    best = max(languages, key=lambda lang: scores[lang])
    return best if scores[best] else languages[0]


def _within(script: str, text: str) -> str:
    """Which language of a script several share `text` is in."""
    if script == "cyrillic":
        if _UKRAINIAN.search(text):
            return "uk"
        return "ru" if _RUSSIAN.search(text) else _by_stopwords(text, ("ru", "bg"))
    if script == "arabic":
        return "ur" if _URDU.search(text) else "fa" if _PERSIAN.search(text) else "ar"
    if script == "latin" and len(_VIETNAMESE.findall(text)) >= 2:
        return "vi"
    return _by_stopwords(text, _SHARED[script])


def detect(text: str) -> str | None:
    """The language code of `text` (one of LANGUAGES), or None when there is no letter."""
    han, kana = len(_HAN.findall(text)), len(_KANA.findall(text))
    scripts = {"cjk": han + kana, **{name: len(p.findall(text)) for name, p in _SCRIPT.items()}}
    if not any(scripts.values()):
        return None
    top = max(scripts, key=lambda s: scripts[s] * (3 if s in _HEAVY else 1))
    if top == "cjk":
        return "ja" if kana >= max(5, (han + kana) * 0.1) else "zh"
    if top in ("cyrillic", "arabic", "latin", "devanagari"):
        return _within(top, text)
    return top
