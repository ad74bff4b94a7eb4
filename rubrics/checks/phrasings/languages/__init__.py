"""What the `language` phrasings read a language by: `names`, the names a request gives a
language by and their ISO codes (English names and aliases, the languages' own names, Chinese
names, countries and peoples); `people`, the response's language named by the people the text
is for ("for my Brazilian readers, in their language"); `named`, the response's language read by
its name, recall first, where the rows of `language` and `people` read none ("some tips on
sleeping better in Greek?", "my grandmother speaks only Tamil, write her a note")."""
