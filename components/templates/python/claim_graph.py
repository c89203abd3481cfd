"""A kura claim-graph component in Python.

build() gets the query, the facets kura detected in it, and the evidence
it found; it returns claims, edges from claims to evidence ids it was
given, and one coverage line per facet. This starting point makes one
supported claim per evidence (its first sentence) for the query's first
facet.
"""

from typing import List

import wit_world
from wit_world.imports import types


def first_sentence(text: str) -> str:
    for stop in ("。", ". ", "\n"):
        if stop in text:
            return text.split(stop, 1)[0].strip()
    return text.strip()[:200]


class WitWorld(wit_world.WitWorld):
    def build(
        self, query: str, query_facets: List[types.Facet], evidences: List[types.Evidence]
    ) -> types.Graph:
        facet = query_facets[0] if query_facets else types.Facet.UNKNOWN
        claims = []
        edges = []
        for i, e in enumerate(evidences):
            claim_id = f"c{i + 1}"
            claims.append(
                types.Claim(claim_id, facet, first_sentence(e.text), types.ClaimStatus.SUPPORTED, 0.5)
            )
            edges.append(types.Edge(claim_id, e.evidence_id, types.Relation.SUPPORTS, 0.5))
        coverage = types.CoverageStatus.COVERED if claims else types.CoverageStatus.MISSING
        facets = [
            types.FacetSummary(f, len(claims), len(claims), 0, 0, coverage) for f in (query_facets or [facet])
        ]
        return types.Graph(claims, edges, facets)
