"""A kura reranker in Python: token overlap.

A candidate's score is the share of the query's tokens that also occur in
the candidate's heading path or text. Tokens are lower-cased ASCII words
and, for Japanese and Chinese, pairs of neighbouring kana/kanji. The same
scoring is written in JavaScript (../js-reranker) and Rust
(../rust-reranker), so the three can be compared call for call.

Build (from this folder):
    componentize-py -d ../../../wit -w reranker componentize app -o reranker.wasm
"""

from typing import List

import wit_world
from wit_world.imports import log, types


def is_cjk(c: str) -> bool:
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF


def tokens(text: str) -> set:
    out = set()
    word = ""
    run = ""
    for c in text.lower() + " ":
        if c.isascii() and c.isalnum():
            word += c
        elif word:
            out.add(word)
            word = ""
        if is_cjk(c):
            run += c
        elif run:
            out.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
            run = ""
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
