"""The phrasings of requirements on words and letters: `keywords` (English) and `keywords_zh`
(Chinese and mixed) for keyword and forbidden_word, `letters` for letter_frequency, `case` for
lowercase, uppercase and capital_word_count; `case_named`, the whole response's case read by
its name where `case` reads none ("make the announcement capital letters")."""
