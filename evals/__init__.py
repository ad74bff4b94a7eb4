"""`redraft eval`: WritingBench through a running redraft server, scored by a separate judge.

Imports `rubrics` and `generation` (and the `openai` SDK to reach the server), never `app`.
"""
