"""Recall: the tokenizer (`tokenize`), BM25F postings (`bm25f`), the one ranking pipeline with its
gates (`rank`, `explain`), cached text ranking of facts and lessons (`text_rank`), the episode record
(`episode`) and the in-memory episode index (`index`).

May import: text.
"""
