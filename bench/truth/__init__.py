"""The truth measurement: what a model is told after a real history is imported, line
by line, labelled true / content-free / false-or-stale against the transcripts.

* `projects` — which project histories, their split, their transcripts and project trees;
* `history` — the transcripts of one project as the labeller reads them (`bench/real_census.py`
  readers, never the product's);
* `render` — the product's side: import as a new user would, then every channel a model reads;
* `label` — the stated rules (`tests/fixtures/truth/README.md`), one function per rule id;
* `bench/bench_truth.py` — `python -m bench truth [--heldout] [--examples]`.
"""
