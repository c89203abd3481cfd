"""JMdict, as the jamdict-data package ships it, in the form of kura's
Japanese-to-English lexicon: a line per Japanese word, the word, a tab and
up to three English words, the lines sorted (by code point, which is the
order of their UTF-8 bytes).

`kura models install` runs this with the Python whose pip fetched the
package: python jmdict.py TARBALL OUT_DIR writes OUT_DIR/ja-en.txt and
OUT_DIR/LICENSE. The standard library only.
"""

import collections
import lzma
import os
import re
import shutil
import sqlite3
import sys
import tarfile
import tempfile

DATABASE = "jamdict_data-1.5/jamdict_data/jamdict.db.xz"
LICENSE = "jamdict_data-1.5/jamdict_data/LICENSE.md"
# Words that say nothing of a gloss's topic.
STOP = set(
    "a an the to of in on for by with be or and as at from into one's someone "
    "something sth sb oneself it its is are".split()
)
PER_WORD = 3


def cjk_word(w):
    """Two characters or more, one of them a kanji or katakana: a run of
    hiragana or a lone character matches inside too many words."""
    return len(w) >= 2 and any("\u4e00" <= c <= "\u9fff" or "\u30a0" <= c <= "\u30ff" for c in w)


def glosses(db):
    """Each entry's English glosses, sense by sense."""
    senses = collections.defaultdict(list)
    rows = db.execute(
        "select s.idseq, s.ID, g.text from Sense s join SenseGloss g on g.sid = s.ID "
        "where g.lang = 'eng' or g.lang is null order by s.ID"
    )
    for idseq, sid, text in rows:
        senses[idseq].append((sid, text))
    return senses


def english(entries, senses):
    """The English words of the first two senses of a word's first two
    entries, without parenthesized notes or stop words, at most PER_WORD."""
    words = []
    for idseq in sorted(entries)[:2]:
        seen = []
        for sid, text in senses.get(idseq, []):
            if sid not in seen:
                seen.append(sid)
            if len(seen) > 2:
                break
            text = re.sub(r"\([^)]*\)", "", text)
            for w in re.findall(r"[A-Za-z][A-Za-z\-]+", text.lower()):
                if w not in STOP and w not in words:
                    words.append(w)
    return [w for w in words[:8] if len(w) >= 2][:PER_WORD]


def main(tarball, out_dir):
    with tarfile.open(tarball) as t, tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "jamdict.db")
        with lzma.open(t.extractfile(DATABASE)) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        with open(os.path.join(out_dir, "LICENSE"), "wb") as dst:
            shutil.copyfileobj(t.extractfile(LICENSE), dst)
        db = sqlite3.connect(path)
        senses = glosses(db)
        heads = collections.defaultdict(set)
        for table in ("Kanji", "Kana"):
            for idseq, text in db.execute(f"select idseq, text from {table}"):
                heads[text].add(idseq)
        db.close()
    lines = []
    for word, entries in heads.items():
        if not cjk_word(word) or "\t" in word or "\n" in word:
            continue
        words = english(entries, senses)
        if words:
            lines.append(f"{word}\t{' '.join(words)}\n")
    lines.sort()
    with open(os.path.join(out_dir, "ja-en.txt"), "w", encoding="utf-8") as f:
        f.writelines(lines)
    print(len(lines), "words")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
