"""Why a memory was recalled: the explanation attached to a ranked hit.

Every number the ranker used for one hit, in the order the pipeline of S-3.7 used it: the BM25F
contribution of each matched query term (split over the fields it came from), the coverage the
gate saw, the recency and success factors, and the best score the relative floor compared with.
The field split is exact: a term's tf is the sum of `weight × count` over fields, and each field
gets that share of the term's contribution, so the parts add up to the BM25F score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TermContribution:
    """One matched query term: `score = idf × norm`, split over fields by their share of tf."""

    term: str
    idf: float
    df: int
    tf: float
    norm: float
    score: float
    fields: tuple[tuple[str, float], ...]
    counted: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "idf": self.idf,
            "df": self.df,
            "tf": self.tf,
            "norm": self.norm,
            "score": self.score,
            "fields": dict(self.fields),
            "counted": self.counted,
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """Everything that decided one hit's score and survival."""

    terms: tuple[TermContribution, ...]
    missing: tuple[str, ...]
    bm25: float
    coverage: float
    coverage_matched: int
    coverage_terms: int
    min_coverage: float
    recency: float
    age_days: float
    success_factor: float
    score: float
    best: float
    floor: float
    n_candidates: int
    avg_len: float
    mode: str

    def field_totals(self) -> dict[str, float]:
        """BM25F score per field (the sum of the field shares of every matched term)."""
        totals: dict[str, float] = {}
        for term in self.terms:
            for field, share in term.fields:
                totals[field] = totals.get(field, 0.0) + share
        return totals

    def to_dict(self) -> dict[str, Any]:
        return {
            "terms": [t.to_dict() for t in self.terms],
            "missing": list(self.missing),
            "fields": self.field_totals(),
            "bm25": self.bm25,
            "coverage": self.coverage,
            "coverage_matched": self.coverage_matched,
            "coverage_terms": self.coverage_terms,
            "min_coverage": self.min_coverage,
            "recency": self.recency,
            "age_days": self.age_days,
            "success_factor": self.success_factor,
            "score": self.score,
            "best": self.best,
            "floor": self.floor,
            "n_candidates": self.n_candidates,
            "avg_len": self.avg_len,
            "mode": self.mode,
        }

    def render(self) -> str:
        """A few human lines: the formula with its numbers, then one line per term."""
        lines = [
            (
                f"score {self.score:.4f} = bm25 {self.bm25:.4f} × recency {self.recency:.3f}"
                f" ({self.age_days:.1f} d) × success {self.success_factor:.2f}"
            ),
            (
                f"coverage {self.coverage_matched}/{self.coverage_terms} = {self.coverage:.2f}"
                f" (gate {self.min_coverage:.2f}); floor {self.floor:.4f} of best {self.best:.4f}"
            ),
        ]
        for term in self.terms:
            parts = ", ".join(f"{field} {share:.3f}" for field, share in term.fields)
            lines.append(
                f"  {term.term}: idf {term.idf:.3f} × norm {term.norm:.3f} = {term.score:.4f}"
                f" (tf {term.tf:g}, df {term.df}; {parts})"
            )
        if self.missing:
            lines.append("  missing: " + ", ".join(self.missing))
        return "\n".join(lines)
