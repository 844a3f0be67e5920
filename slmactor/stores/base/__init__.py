"""Store primitives every store is built on: the append-only JSONL log (`jsonl`, `jsonl_lines`),
the atomic JSON document (`jsondoc`), Markdown mirrors (`markdown`), file-system helpers
(`fsutil`), the on-disk layout (`layout`), the single-instance lock (`lock`), watched and confined
files (`watched`, `confined`), the store errors (`errors`) and the warning log `status` shows
(`warnings`).

The domain stores beside this package (episodes, facts, rules, ...) are built from these.
"""
