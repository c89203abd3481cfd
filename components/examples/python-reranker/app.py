"""A kura reranker in Python: token overlap.

A candidate's score is the share of the query's tokens that also occur in
the candidate's heading path or text. Tokens are lower-cased ASCII words
and, for Japanese and Chinese, pairs of neighbouring kana/kanji. The same
scoring is written in JavaScript (../js-reranker) and Rust
(../rust-reranker), so the three can be compared call for call.

Build (from this folder):
    componentize-py -d ../../../wit -w reranker componentize app -o reranker.wasm
"""

import re
from typing import List

import wit_world
from wit_world.imports import log, types


# The scan over characters runs in `re`'s C code, not in a Python loop: in
# an interpreter compiled to WebAssembly a loop per character costs twice
# as much for the same tokens.
WORD = re.compile(r"[a-z0-9]+")
CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")


def tokens(text: str) -> set:
    text = text.lower()
    out = set(WORD.findall(text))
    for run in CJK_RUN.findall(text):
        out.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return out


def score(query: set, heading: str, text: str) -> float:
    if not query:
        return 0.0
    return len(query & tokens(heading + " " + text)) / len(query)


class WitWorld(wit_world.WitWorld):
    def rerank(self, query: str, candidates: List[types.Candidate]) -> List[float]:
        q = tokens(query)
        log.log(log.Level.DEBUG, f"python reranker: {len(q)} query tokens, {len(candidates)} candidates")
        return [score(q, c.heading_path, c.text) for c in candidates]
