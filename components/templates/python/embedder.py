"""A kura embedder component in Python.

embed() gets texts (a section's title path and the start of its text, or a
question) and returns one vector per text, all of one length (at most 512
numbers). This starting point is a static embedding of hashed character
n-grams (each word, and each pair of neighbouring characters), 256 numbers:
it matches spellings, not meaning. Replace embed_one with your model; kura
scales the vectors to unit length.
"""

from typing import List

import wit_world

DIM = 256


def fnv1a(s: str) -> int:
    h = 0x811C9DC5
    for b in s.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def features(text: str) -> List[str]:
    out = []
    word = ""
    for c in text.lower() + " ":
        if c.isalnum():
            word += c
            continue
        if word:
            out.append(word)
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
            word = ""
    return out


def embed_one(text: str) -> List[float]:
    v = [0.0] * DIM
    for f in features(text):
        h = fnv1a(f)
        v[h % DIM] += -1.0 if h & 0x80000000 else 1.0
    return v


class WitWorld(wit_world.WitWorld):
    def embed(self, texts: List[str]) -> List[List[float]]:
        return [embed_one(t) for t in texts]
