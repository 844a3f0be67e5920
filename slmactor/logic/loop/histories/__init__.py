"""Replay with learning over real histories: what memory would have done at every failure.

One engine for `slmactor metrics replay PATH… --learn` and `python -m bench real_replay
--histories`: `engine.replay` walks each project's sessions in time order with a fresh rule book,
asks memory — through functions the caller passes in, the same ones the rules actor and the
hooks answer with — what it would have done before each call and after each failure, decides
structurally what the failure's fix was and whether memory could have known it (`facets`), and
counts it per harness (`report`). Pure: no I/O, no clock.
"""
