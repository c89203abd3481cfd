// A kura embedder component in JavaScript.
//
// embed() gets texts (a section's title path and the start of its text, or
// a question) and returns one vector per text, all of one length (at most
// 512 numbers). This starting point is a static embedding of hashed
// character n-grams (each word, and each pair of neighbouring characters),
// 256 numbers: it matches spellings, not meaning. Replace embedOne with
// your model; kura scales the vectors to unit length.

const DIM = 256;
const encoder = new TextEncoder();

function fnv1a(s) {
  let h = 0x811c9dc5;
  for (const b of encoder.encode(s)) {
    h = Math.imul(h ^ b, 0x01000193) >>> 0;
  }
  return h;
}

// A word: ASCII letters and digits, or any other character but spaces
// and punctuation (this JavaScript engine has no Unicode classes).
function isWordChar(c) {
  if (/[0-9a-z]/.test(c)) return true;
  return c.charCodeAt(0) > 0x7f && !/[\s\u3000-\u303f\uff01-\uff0f]/.test(c);
}

function features(text) {
  const out = [];
  let word = [];
  for (const c of [...text.toLowerCase(), ' ']) {
    if (isWordChar(c)) {
      word.push(c);
      continue;
    }
    if (word.length === 0) continue;
    out.push(word.join(''));
    for (let i = 0; i + 1 < word.length; i++) out.push(word[i] + word[i + 1]);
    word = [];
  }
  return out;
}

function embedOne(text) {
  const v = new Float32Array(DIM);
  for (const f of features(text)) {
    const h = fnv1a(f);
    v[h % DIM] += h & 0x80000000 ? -1 : 1;
  }
  return v;
}

export function embed(texts) {
  return texts.map(embedOne);
}
