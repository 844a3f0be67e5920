"""Working memory, the short-term memory of one run: the run's state and its bounded appends
(`memory`), the records it keeps (`records`), the table of live runs (`runs`), which tools read,
edit or run commands (`toolclasses`), the hot-path clipping fast paths (`fastclip`) and the
MustPreserve digest (`digest`).

May import: text.
"""
