"""More general readings of requirements said other ways: the response's language as the
subject's, after a language refused, set off by commas, by the language its reader reads; a
bound said as a place ("south of", "past"), a range sharing its multiplier, a limit glued to
its count ("90-word-max"), two bounds with the first's unit unsaid; the case on a labelled
line or of every letter; letters counted in a range or in occurrences; numbered lists
numbered 1 to N or about N long; spans counted, then each put in bold; no commas said
short or by the sign; both ends of the reply said to be quotation marks; and what gives no
check: a schema the request asks about, the user's own text, the marks alone; and the
reading by name the pre-pass tries when its enumerated rules read no language or no case
(`phrasings.languages.named`, `phrasings.words.case_named`), with each of its structural
exclusions. Each on wordings of its own and on near misses that must give no check."""

from __future__ import annotations

import pytest

from rubrics.checks.prepass import prepass


def found(request: str) -> list[tuple[str, dict]]:
    return [(c.kind, c.params) for c in prepass(request)]


def count(kind, relation, n, upper=None, **extra):
    return (kind, {"relation": relation, "n": n, "upper": upper, **extra})


def words(relation, n, upper=None):
    return count("word_count", relation, n, upper)


def language(code):
    return ("language", {"language": code})


QUOTED = ("quoted", {})
UPPER = ("uppercase", {})
LOWER = ("lowercase", {})
NO_COMMAS = ("no_commas", {})


@pytest.mark.parametrize("request_text, code", [
    # the text asked for as the subject, with words before and after its noun
    ("A short thank-you note to the parish volunteers should be written in Polish.", "pl"),
    ("The email to our suppliers in Lyon must be in French.", "fr"),
    ("An apology letter for the delayed shipment has to be composed in Korean.", "ko"),
    # a language refused, then the one asked for
    ("Not in English please, Greek.", "el"),
    ("Don't answer this in English, Turkish only — why do cats purr?", "tr"),
    # set off by commas with a word between, in a parenthesis, before a colon
    ("Explain how tides work to me, in German of course, and keep it simple.", "de"),
    ("How do I say thank you? (Portuguese please, it's for my host.)", "pt"),
    ("Make your answer Swedish: a recipe for cinnamon buns.", "sv"),
    ("Everything you send back has to be in Dutch. What is a windmill for?", "nl"),
    # a verb and its object, said for someone
    ("Draft those reminders for him in Italian: pay rent, water the plants.", "it"),
    # the reader named by the language they read, speak or understand
    ("My neighbour only reads Greek, so please write the invitation for him in his language.",
     "el"),
    ("The flyer is for Hindi-speaking families; write the flyer text in their language.", "hi"),
])
def test_the_responses_language_said_other_ways(request_text, code):
    assert found(request_text) == [language(code)]


@pytest.mark.parametrize("request_text", [
    "A thank-you card for the nurses should be written in pencil.",
    "A letter from my pen pal should be answered soon.",
    # a list of languages refused, and no language asked
    "Not in English, French, or German: which is the hardest to learn?",
    "No English words in the title, please.",
    # a reader of two languages, and a character's language
    "My uncle speaks Spanish and Italian; write him a note in his language.",
    "She only reads Greek. Write a story about a woman who dreams in her language.",
    "Translate 'good night' into Polish, please.",
])
def test_a_language_that_is_not_the_responses(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text, expected", [
    # a bound said as a place, an approximation in other words
    ("Keep it south of 80 words: why is the sky blue?", words("at most", 79)),
    ("Something north of 300 words on the history of tea, please.", words("at least", 301)),
    ("Write in the neighbourhood of five paragraphs on composting.",
     count("paragraph_count", "between", 4, 6, divider=None)),
    ("Describe your first job in the ballpark of 10 sentences.",
     count("sentence_count", "between", 8, 12)),
    # a couple hundred; a range whose first number leaves the multiplier unsaid
    ("Keep the bio to at most a couple hundred words.", words("at most", 200)),
    ("Write a couple of hundred words about autumn.", words("between", 160, 240)),
    ("Write four to five hundred words on the Silk Road.", words("between", 400, 500)),
    ("Write fifty to a hundred words on frogs.", words("between", 50, 100)),
    # a limit glued to its count; a negation letting the text run past it
    ("A 90-word-max product description for a desk lamp.", words("at most", 90)),
    ("A 200-word-minimum essay on libraries.", words("at least", 200)),
    ("Don't let the summary run past 60 words.", words("at most", 60)),
    # two bounds, the first with its unit unsaid
    ("Write no fewer than 200 but no more than 260 words about trains.",
     words("between", 200, 260)),
    # the colon ends the requirement before the question it introduces
    ("Answer in fewer than 60 words: how do I unclog a drain?", words("at most", 59)),
])
def test_a_length_or_count_said_other_ways(request_text, expected):
    assert found(request_text) == [expected]


@pytest.mark.parametrize("request_text", [
    # the user's own text, a text before this one, a question on how to
    "Our abstract is 250 words and the limit is 200. Which sentences should go?",
    "Our brochure has five paragraphs; is that too long for a trifold?",
    "My essay has at least 500 words; is that enough?",
    "In the past 3 paragraphs I described the plot; now write the ending.",
    "How do I keep my essay under 500 words?",
])
def test_a_count_that_is_not_the_responses(request_text):
    assert found(request_text) == []


def test_a_bound_said_of_none_of_the_parts_is_the_parts():
    request = ("Write five bullet points on bike safety; none of the bullets should run past "
               "twelve words.")
    assert found(request) == [count("bullet_count", "exactly", 5)]


@pytest.mark.parametrize("request_text, expected", [
    ("Case: lower\nTopic: a poem about rain", [("lowercase", {})]),
    ("Case: upper\nTopic: a shout-out to the team", [("uppercase", {})]),
    ("Each character of your reply is to be typed as a capital. Announce the bake sale.",
     [("uppercase", {})]),
    ("Keep it casual, every letter lowercase: a note about the bake sale.",
     [("lowercase", {})]),
    ("Block capitals from the first word to the last, please: a warning about thin ice.",
     [("uppercase", {})]),
    # a length beside the letters is the whole text's, not each letter's
    ("Every letter small, please: eighty words on my garden.",
     [("lowercase", {}), words("between", 64, 96)]),
    ("Case: mixed\nTopic: a poem about rain", []),
    ("Every letter small and neat is how my grandmother wrote.", []),
    ("Teach me how to write every letter small in calligraphy.", []),
])
def test_the_case_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("The letter z should turn up between 3 and 6 times. Write about a zebra.",
     [count("letter_frequency", "between", 3, 6, letter="z")]),
    ("Use the letter b 3 or 4 times in a line about bees.",
     [count("letter_frequency", "between", 3, 4, letter="b")]),
    ("Letter 'k': at least 5 occurrences. Topic: kites.",
     [count("letter_frequency", "at least", 5, letter="k")]),
    ("Letter 'k': at least 5 words. Topic: kites.", []),
])
def test_letters_counted_in_a_range_or_in_occurrences(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Give the steps for planting a tree, numbered 1 to 6.",
     count("numbered_count", "exactly", 6)),
    ("A numbered list that doesn't go beyond 7 points: ways to save water.",
     count("numbered_count", "at most", 7)),
    ("A numbered list of around 6 tips for new runners.",
     count("numbered_count", "between", 4, 8)),
    ("Ordered list (i., ii., iii.), exactly four entries: reasons to learn chess.",
     count("numbered_count", "exactly", 4)),
])
def test_a_numbered_list_said_other_ways(request_text, expected):
    assert found(request_text) == [expected]


@pytest.mark.parametrize("request_text, expected", [
    # spans counted, then each set in markdown
    ("Write a recipe. Choose the two trickiest steps and put each one in **bold**.",
     [count("highlight_count", "at least", 2)]),
    ("List five safety rules and bold each of them.", [count("highlight_count", "at least", 5)]),
    # markdown as a noun, then how many spans
    ("Bold on exactly 3 key terms. Topic: the water cycle.",
     [count("highlight_count", "exactly", 3)]),
    ("Italics for at most two phrases. Write about jazz.",
     [count("highlight_count", "at most", 2)]),
    ("Pick the three trickiest steps and wrap each one in a short warning.", []),
    ("Emphasis on two points: cost and speed.", []),
])
def test_highlights_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Write a lease. Put anything the tenant has to fill in later in [square brackets].",
     [count("placeholder_count", "at least", 1)]),
    # a count on the line before is that line's
    ("Length: at least 120 words\nPlaceholders: two, in [brackets]",
     [words("at least", 120), count("placeholder_count", "exactly", 2)]),
    ("Write a play scene. Put every stage direction in square brackets.", []),
])
def test_placeholders_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Periods are fine, semicolons too, but commas are not.", [NO_COMMAS]),
    ("Write a haiku without a single ',' anywhere.", [NO_COMMAS]),
    ("Leave out every comma and every semicolon.", [NO_COMMAS]),
    ("Commas are not optional in this style guide, right?", []),
    ("Why do some writers never use the ',' character?", []),
    ("Leave out every adjective.", []),
])
def test_no_commas_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text, expected", [
    ("Format: inside double quotes\nTask: a motto for a rowing club", [QUOTED]),
    ("Put the whole reply inside one pair of quotation marks: a toast to the bride.", [QUOTED]),
    ("Start your answer with a double quote and end it with another one.", [QUOTED]),
    ("Write one line, opening and closing with a quotation mark.", [QUOTED]),
    # the marks shown alone are no phrase to start with
    ('Begin with " and end with " — nothing else outside. A fortune cookie message.', [QUOTED]),
    ("Format: with quotes from two experts\nTask: an article on sleep", []),
    ("Begin with a quotation from Einstein and end with one from Curie.", []),
])
def test_the_whole_reply_in_quotes_said_other_ways(request_text, expected):
    assert found(request_text) == expected


@pytest.mark.parametrize("request_text", [
    'What does this JSON Schema require? {"type": "object", "properties": {"id": '
    '{"type": "integer"}}}',
    'Describe this schema for a junior developer: {"type": "array", "items": '
    '{"type": "string"}}',
    'Is my object valid against this schema? Object: {"a": 1} Schema: {"type": "object", '
    '"properties": {"a": {"type": "string"}}}',
])
def test_a_schema_the_request_asks_about_is_no_check(request_text):
    assert found(request_text) == []


@pytest.mark.parametrize("request_text", [
    'Return what you find as JSON matching this schema: {"type": "object", '
    '"properties": {"name": {"type": "string"}}}',
    # a polite request phrased as a question
    'Can you give me JSON that validates against this schema? {"type": "object", '
    '"properties": {"name": {"type": "string"}}}',
])
def test_a_schema_the_answer_meets_stays_one(request_text):
    assert found(request_text) == [("json_schema", {
        "schema": '{"properties": {"name": {"type": "string"}}, "type": "object"}'})]


@pytest.mark.parametrize("request_text, expected", [
    ("Banned vocab: 'basically'. Write a toast.", [("forbidden_word", {"word": "basically"})]),
    ("Forbidden language: none, be yourself.", []),
])
def test_a_labelled_list_of_banned_vocabulary(request_text, expected):
    assert found(request_text) == expected


# --- the reading by name, tried where the enumerated rules read none of its kind

@pytest.mark.parametrize("request_text, code", [
    # after "in", wherever it stands
    ("Can you give me some tips on sleeping better in Greek?", "el"),
    ("Something cheerful for the office fridge door in Swahili, please, about mugs.", "sw"),
    ("I'd love a bedtime story about a sleepy turtle in Simplified Chinese.", "zh"),
    # a clause of its own, before or after the task
    ("Three quick tips for a first date. Swahili, if you can.", "sw"),
    ("Mandarin for this one — what should a first-time visitor to Chengdu eat?", "zh"),
    ("Explain what inflation is to a 12-year-old, Hindi preferred.", "hi"),
    # the object of a verb of using or choosing; the adjective of a text asked for
    ("Could you stick to Bahasa Indonesia? What should I pack for Bali?", "id"),
    ("Could you use Farsi? I need three ideas for a dinner menu.", "fa"),
    ("Please draft an Urdu reminder for the tenants about the water cut.", "ur"),
    # the only language the reader reads, speaks or understands
    ("My grandmother speaks only Tamil, so write her a short note for her birthday.", "ta"),
    ("Write a short guide to composting for readers who only know Bengali.", "bn"),
    ("Write a note for the babysitter. She's from Brazil and only reads Portuguese.", "pt"),
    ("The note is for my neighbour, whose first language is Marathi: ask her to water my "
     "plants.", "mr"),
    ("no english please, polish. my dad only reads polish, explain how to reset a router", "pl"),
])
def test_a_language_read_by_name(request_text, code):
    assert found(request_text) == [language(code)]


@pytest.mark.parametrize("request_text", [
    # a translation target or an original
    "Translate this into Swedish for me: 'The meeting has moved to Friday.'",
    "Write a haiku, then give the Japanese original of a famous one by Basho.",
    "Write a thank-you note and add a Spanish version below it.",
    # a topic, or a noun the name qualifies
    "Write a blog post about why I stopped learning Russian after a year.",
    "Write a short history of the Swahili language for a school newsletter.",
    "Write an email to my son's Korean tutor asking to move Thursday's lesson.",
    "Plan a day in Kyoto for someone who loves Japanese gardens and tea.",
    "Recommend a good Greek restaurant in Melbourne and say why.",
    # a question about words or about the language
    "How do you say 'see you tomorrow' in Hebrew, and is it formal?",
    "Is Korean harder to write than Japanese? Give me your honest take.",
    # a quote the user includes
    'Explain the joke in "I only speak French on Sundays" for my class.',
    # refused
    "Summarize the rules of cricket for a newsletter, no Hindi please.",
    "Write a packing list for a trip to Greece for someone who speaks no Greek.",
    # one part only
    "Write a birthday card for my neighbour, with just the greeting in Polish.",
    "Write a welcome message for our new hires. Include one Arabic phrase at the end.",
    "Write a toast for my brother, a blessing in Hebrew, then the rest of it.",
    # a list or comparison of languages
    "Compare Hindi and Urdu grammar in a short table.",
    "What is the most spoken language in India, Hindi or English?",
    # the user's own text, or another's
    "My lecture notes are in German. Can you turn them into a study checklist?",
    "My boss sent me an email in Dutch. Draft a short reply saying I'll be late.",
    "The menu is in Greek and I can't read it. What should I order at a taverna?",
    # a character's language
    "Write a story about a boy who only speaks Italian and moves to Chicago.",
    # the idiom, and "polish" the verb
    "Describe in plain English what this error message means.",
    "polish this cover letter for me, it's for a bank job",
])
def test_a_language_named_that_is_not_the_responses(request_text):
    assert found(request_text) == []


def test_the_reading_by_name_waits_on_the_enumerated_rules():
    # the enumerated rules read German: the grandmother's Tamil is not read on top of it
    assert found("Answer in German. My grandmother speaks only Tamil.") == [language("de")]
    # two languages read by name are ambiguous: none
    assert found("Three tips for sleeping better in Greek. Swahili, if you can.") == []


@pytest.mark.parametrize("request_text, expected", [
    ("Make the announcement capital letters, it's going on a banner outside the gym.", UPPER),
    ("Write the fire drill notice in block letters so nobody can miss it.", UPPER),
    ("A motivational quote for my gym wall. I want it uppercase.", UPPER),
    ("Write an ad, shouting in caps the whole way through.", UPPER),
    ("Give me a chant for the rally. Not one lowercase letter anywhere.", UPPER),
    ("A haiku about frogs, lowercase vibes throughout.", LOWER),
    ("A toast for my sister's wedding, not one capital anywhere.", LOWER),
    ("Give me a camping checklist, and keep the capital letters out of it entirely.", LOWER),
    ("Write a haiku about the moon with nothing capitalized.", LOWER),
])
def test_a_case_read_by_name(request_text, expected):
    assert found(request_text) == [expected]


@pytest.mark.parametrize("request_text", [
    # a count of words, or some words
    "Write a pep talk for the team with a couple of words in capitals for punch.",
    # one part only
    "Design a poster with the headline in block capitals and the details below.",
    "Write a LinkedIn post; acronyms like AI and HR should stay in capitals.",
    "Write an email about the fire drill. Capital letters only for the word URGENT.",
    # a contrast or a topic
    "Write a guide for kids explaining capital letters and small letters.",
    "Explain when to use uppercase letters in German nouns.",
    "My teacher says I overuse capital letters. Write a paragraph that shows good usage.",
    "Can you explain what a lowercase 'b' looks like compared to 'd'?",
    # uppercase refused: no case asked
    "Write a memo to staff. Don't write it in all caps like last time.",
    # the user's own text
    "Here's my haiku, lowercase on purpose: 'the sea'. Give me feedback.",
])
def test_a_case_named_that_is_not_the_responses(request_text):
    assert found(request_text) == []


def test_a_count_of_capitalised_words_is_no_case():
    assert found("No more than two words may be written entirely in capital letters. Draft a "
                 "reminder about overdue books.") == [count("capital_word_count", "at most", 2)]
