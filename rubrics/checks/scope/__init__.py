"""Whose a reading is. The pre-pass asks it of every match: `parts` says whether a length or
count is the response's or one named part's (an item's, a section's, each of several texts'),
`other_texts` whether a form, a word or a count is said of a text other than the response
(the user's own, one the user gives, a character's in the story)."""
