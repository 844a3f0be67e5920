"""The knowledge graph: node ids, edges and the adjacency index (`core`), the edges derived from
existing memory (`backfill`) and queries over them (`query`).

May import: text, recall.
"""
