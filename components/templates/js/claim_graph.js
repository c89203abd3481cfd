// A kura claim-graph component in JavaScript.
//
// build() gets the query, the facets kura detected in it, and the evidence
// it found; it returns claims, edges from claims to evidence ids it was
// given, and one coverage line per facet. This starting point makes one
// supported claim per evidence (its first sentence) for the query's first
// facet.

function firstSentence(text) {
  for (const stop of ['。', '. ', '\n']) {
    const i = text.indexOf(stop);
    if (i >= 0) return text.slice(0, i).trim();
  }
  return text.trim().slice(0, 200);
}

export function build(query, queryFacets, evidences) {
  const facet = queryFacets[0] ?? 'unknown';
  const claims = evidences.map((e, i) => ({
    claimId: `c${i + 1}`,
    facet,
    text: firstSentence(e.text),
    status: 'supported',
    confidence: 0.5,
  }));
  const edges = evidences.map((e, i) => ({
    fromClaimId: `c${i + 1}`,
    toEvidenceId: e.evidenceId,
    relation: 'supports',
    confidence: 0.5,
  }));
  const facets = (queryFacets.length ? queryFacets : [facet]).map((f) => ({
    facet: f,
    claimCount: claims.length,
    supportedCount: claims.length,
    conflictedCount: 0,
    unresolvedCount: 0,
    coverageStatus: claims.length ? 'covered' : 'missing',
  }));
  return { claims, edges, facets };
}
