"""A generation stuck repeating itself is cut where the repetition starts; a refrain is not."""

from __future__ import annotations

import pytest

from generation.local.repeats import RepeatGuard, cut_repetition, repeated_tail
from loops.answer import looping, unlooped

TITLE = "The Quiet Kettle: a kettle that whispers while it boils."


def test_a_title_line_forty_times_is_cut_to_one() -> None:
    text = f"# The Quiet Kettle\n\n{TITLE}\n" + f"{TITLE}\n" * 39
    cut, found = cut_repetition(text)
    assert found and cut == f"# The Quiet Kettle\n\n{TITLE}"


def test_a_loop_cut_off_mid_sentence_keeps_its_first_whole_sentence() -> None:
    text = "Tea is good. " + "It is a task. " * 30 + "It is a"
    assert cut_repetition(text) == ("Tea is good. It is a task.", True)


@pytest.mark.parametrize("text", [
    # a chorus sung between verses, twice in a row at the end, and a repeated list label
    ("Verse: the night is young and so are we.\nChorus: oh the night is long, we sing along\n"
     "Verse: the road goes on for miles and miles.\nChorus: oh the night is long, we sing along\n"
     "Chorus: oh the night is long, we sing along\n"),
    ("Tip: warm the pot first.\nTip: use fresh water, never reboiled.\nTip: steep green tea "
     "for two minutes.\nTip: black tea takes four.\nTip: taste before you add sugar."),
    # a song whose chorus comes back after every verse
    "".join(f"Verse {n}: {line}\nChorus: we sing along, all night long, till the morning "
            "comes and the light is strong\n"
            for n, line in enumerate(["the town is asleep and the streets are wide",
                                      "a lamp in a window, a cat on a wall",
                                      "the river is slow and the bridges are old",
                                      "we walk to the end of the last pier"], 1)),
    "Row, row, row your boat, gently down the stream.",
])
def test_refrains_and_repeated_labels_are_not_loops(text: str) -> None:
    assert cut_repetition(text) == (text, False)
    assert not looping(text)


def test_the_guard_fires_once_three_units_in_a_row_span_enough_tokens() -> None:
    unit = list(range(100, 116))  # 16 tokens
    guard = RepeatGuard()
    fired = [(i, n) for i, token in enumerate([1, 2, 3, *unit * 5])
             if (n := guard.feed(token)) is not None]
    # first at the end of the third copy: the last two copies repeat the first
    assert fired[0] == (3 + 3 * 16 - 1, 2 * 16)
    assert repeated_tail([1, 2, 3, *unit * 3]) == 32


def test_a_short_unit_needs_many_copies() -> None:
    assert repeated_tail(["ha"] * 20) == 0
    assert repeated_tail(["ha"] * 60) == 59


def test_unlooped_names_the_cut() -> None:
    text = "Tea is good. " + "It is a task. " * 30
    assert unlooped(text, "length") == ("Tea is good. It is a task.", "repetition")
    assert unlooped("Tea is good.", "stop") == ("Tea is good.", "stop")
