// A kura reranker in JavaScript: token overlap, scored exactly as the
// Python (../python-reranker) and Rust (../rust-reranker) examples.
//
// Build (from this folder):
//   componentize-js reranker.js --wit ../../../wit -n reranker -d http fetch-event -o reranker.wasm

import { log } from 'kura:plugins/log@0.1.0';

function isCjk(o) {
  return (o >= 0x3040 && o <= 0x30ff) || (o >= 0x3400 && o <= 0x4dbf) || (o >= 0x4e00 && o <= 0x9fff);
}

function isAsciiAlnum(o) {
  return (o >= 0x61 && o <= 0x7a) || (o >= 0x30 && o <= 0x39);
}

export function tokens(text) {
  const out = new Set();
  let word = '';
  let run = [];
  for (const c of text.toLowerCase() + ' ') {
    const o = c.codePointAt(0);
    if (isAsciiAlnum(o)) {
      word += c;
    } else if (word) {
      out.add(word);
      word = '';
    }
    if (isCjk(o)) {
      run.push(c);
    } else if (run.length) {
      const n = Math.max(run.length - 1, 1);
      for (let i = 0; i < n; i++) out.add(run.slice(i, i + 2).join(''));
      run = [];
    }
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
