"""Pure logic: no I/O, no async, no clock reads, no imports from the rest of slmactor; time and
randomness come in as arguments.

Grouped by domain, one subpackage each. A domain may import only the domains listed for it here
(`tests/runtime/test_layering.py` enforces this table):

    text/      strings, time formats, model/language names, redaction     → nothing
    failures/  normalize → classify → diagnose → fingerprint of a failure  → text
    evolve/    repair transforms, JSON repair, repair rules and seeds      → text, failures, working
    recall/    tokenizer, BM25F, the shared ranker, episodes and the index → text
    working/   working memory of a run: records, runs, digest, tool classes → text
    memory/    facts, distillation, lessons, procedures, the memory block  → text, recall
    policy/    bandit, Beta maths, change points, calibration, latency, reward → text
    loop/      reflection, regressions, metrics, replay, run reports, the HTML report
                                                          → text, failures, evolve, memory, policy, recall
    graph/     the knowledge graph, its back-fill and queries              → text, recall
"""
