// A kura reranker in JavaScript: token overlap, scored exactly as the
// Python (../python-reranker) and Rust (../rust-reranker) examples.
//
// Build (from this folder):
//   componentize-js reranker.js --wit ../../../wit -n reranker -d http fetch-event -o reranker.wasm

import { log } from 'kura:plugins/log@0.1.0';

// The scan over characters runs in the regular-expression engine, not in
// a JavaScript loop: in an interpreter compiled to WebAssembly a loop per
// character costs three times as much for the same tokens.
const WORD = /[a-z0-9]+/g;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+/g;

export function tokens(text) {
  const lower = text.toLowerCase();
  const out = new Set(lower.match(WORD));
  for (const run of lower.match(CJK_RUN) ?? []) {
    const n = Math.max(run.length - 1, 1);
    for (let i = 0; i < n; i++) out.add(run.slice(i, i + 2));
  }
  return out;
}

export function rerank(query, candidates) {
  const q = tokens(query);
  log('debug', `js reranker: ${q.size} query tokens, ${candidates.length} candidates`);
  return candidates.map((c) => {
    if (q.size === 0) return 0;
    const t = tokens(c.headingPath + ' ' + c.text);
    let hit = 0;
    for (const w of q) if (t.has(w)) hit++;
    return hit / q.size;
  });
}
