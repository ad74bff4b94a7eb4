"""The names a request gives a language by, and the ISO codes they stand for: English names
and aliases ("Brazilian Portuguese", "Farsi"), the languages' own names ("Deutsch", "日本語"),
Chinese names ("德语"), the language named in itself ("auf Deutsch", "en español"), a
country for the language spoken there ("the Netherlands") and the people of a country
("Brazilian readers", "customers ... in Japan"), with the peoples and countries that speak
several ("Swiss", "Canada"). The phrasings of `language` read them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rubrics.checks.language import NAMES

_ALIASES_EN = {"farsi": "fa", "bangla": "bn", "mandarin": "zh", "mandarin chinese": "zh",
               "simplified chinese": "zh", "traditional chinese": "zh", "brazilian portuguese":
               "pt", "european portuguese": "pt", "castilian spanish": "es",
               "latin american spanish": "es", "mexican spanish": "es", "canadian french": "fr",
               "bahasa indonesia": "id", "kiswahili": "sw",
               # the languages' own names: "respond in Deutsch", "answer in Español"
               "deutsch": "de", "español": "es", "espanol": "es", "français": "fr",
               "francais": "fr", "italiano": "it", "português": "pt", "portugues": "pt",
               "nederlands": "nl", "svenska": "sv", "suomi": "fi", "polski": "pl", "türkçe": "tr",
               "turkce": "tr", "tiếng việt": "vi", "русский": "ru", "українська": "uk",
               "ελληνικά": "el", "日本語": "ja", "한국어": "ko", "हिन्दी": "hi"}
CODE_EN = {**{name.lower(): code for code, name in NAMES.items()}, **_ALIASES_EN}
CODE_ZH = {
    "英文": "en", "英语": "en", "中文": "zh", "汉语": "zh", "简体中文": "zh", "普通话": "zh",
    "法语": "fr", "法文": "fr", "德语": "de", "德文": "de", "西班牙语": "es", "西班牙文": "es",
    "日语": "ja", "日文": "ja", "韩语": "ko", "韩文": "ko", "朝鲜语": "ko", "俄语": "ru",
    "俄文": "ru", "意大利语": "it", "意大利文": "it", "葡萄牙语": "pt", "葡萄牙文": "pt",
    "荷兰语": "nl", "瑞典语": "sv", "芬兰语": "fi", "波兰语": "pl", "土耳其语": "tr",
    "越南语": "vi", "印尼语": "id", "印度尼西亚语": "id", "斯瓦希里语": "sw", "乌克兰语": "uk",
    "希腊语": "el", "希伯来语": "he", "阿拉伯语": "ar", "阿拉伯文": "ar", "波斯语": "fa",
    "乌尔都语": "ur", "印地语": "hi", "马拉地语": "mr", "尼泊尔语": "ne", "孟加拉语": "bn",
    "旁遮普语": "pa", "古吉拉特语": "gu", "泰米尔语": "ta", "泰卢固语": "te", "卡纳达语": "kn",
    "马拉雅拉姆语": "ml", "泰语": "th", "泰文": "th"}


# the language named in itself: "auf Deutsch", "en español", "日本語で"
CODE_NATIVE = {
    "auf deutsch": "de", "en español": "es", "en espanol": "es", "en castellano": "es",
    "en français": "fr", "en francais": "fr", "in italiano": "it", "em português": "pt",
    "em portugues": "pt", "in het nederlands": "nl", "på svenska": "sv", "po polsku": "pl",
    "по-русски": "ru", "на русском": "ru", "日本語で": "ja", "한국어로": "ko",
    "auf englisch": "en", "en inglés": "en", "en ingles": "en", "en anglais": "en",
    "in inglese": "en", "em inglês": "en"}
# a country for the language spoken there: "in the language spoken in the Netherlands"
CODE_COUNTRY = {
    "germany": "de", "austria": "de", "france": "fr", "spain": "es", "mexico": "es",
    "argentina": "es", "colombia": "es", "italy": "it", "japan": "ja", "korea": "ko",
    "south korea": "ko", "russia": "ru", "portugal": "pt", "brazil": "pt", "the netherlands":
    "nl", "netherlands": "nl", "holland": "nl", "sweden": "sv", "finland": "fi", "poland": "pl",
    "turkey": "tr", "vietnam": "vi", "indonesia": "id", "ukraine": "uk", "bulgaria": "bg",
    "greece": "el", "israel": "he", "iran": "fa", "pakistan": "ur", "thailand": "th",
    "china": "zh", "taiwan": "zh", "england": "en", "the uk": "en", "the us": "en",
    "the usa": "en", "australia": "en", "kenya": "sw", "tanzania": "sw"}

# the people of a country, for the language spoken there: "for my Brazilian readers"
CODE_DEMONYM = {
    "brazilian": "pt", "portuguese": "pt", "japanese": "ja", "german": "de", "austrian": "de",
    "french": "fr", "spanish": "es", "mexican": "es", "argentinian": "es", "argentine": "es",
    "colombian": "es", "italian": "it", "korean": "ko", "russian": "ru", "dutch": "nl",
    "swedish": "sv", "finnish": "fi", "polish": "pl", "turkish": "tr", "vietnamese": "vi",
    "indonesian": "id", "ukrainian": "uk", "bulgarian": "bg", "greek": "el", "israeli": "he",
    "iranian": "fa", "thai": "th", "chinese": "zh", "taiwanese": "zh", "kenyan": "sw",
    "tanzanian": "sw", "american": "en", "british": "en", "english": "en", "australian": "en"}
# peoples and countries that speak several languages: their language names none
SEVERAL_LANGUAGES = (r"swiss|switzerland|belgi(?:an|um)|canad(?:a|ian)|india|indian|"
                     r"singapore(?:an)?|malaysian?|philippines|filipino|nigerian?|african?|"
                     r"europe(?:an)?|latin\s+american?|arab|scandinavian?|luxembourg")


def _alternation(names: Iterable[str]) -> str:
    return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))


LANGUAGE_NAMES = _alternation(CODE_EN)
LANG_EN = rf"(?P<lang>{LANGUAGE_NAMES})"
ZH_LANGUAGE_NAMES = _alternation(CODE_ZH)
LANG_ZH = rf"(?P<lang>{ZH_LANGUAGE_NAMES})"
LANG_NATIVE = rf"(?P<lang>{_alternation(CODE_NATIVE)})"
COUNTRY_NAMES = _alternation(CODE_COUNTRY)
LANG_COUNTRY = rf"(?P<lang>{COUNTRY_NAMES})"
DEMONYMS = _alternation(CODE_DEMONYM)


def code_of(name: str) -> str | None:
    """The ISO code a language's name stands for, in English, Chinese, the language itself or
    a country's name; None for none."""
    name = " ".join(name.split())
    return CODE_EN.get(name.lower()) or CODE_ZH.get(name) or CODE_NATIVE.get(name.lower()) \
        or CODE_COUNTRY.get(name.lower())
