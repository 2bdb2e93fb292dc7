"""Bag-of-words precision, recall and F1 of extracted text against gold text.

The metric of ../shared/corpora/README.md: token multisets of a page's
extracted text and its gold main-content text; precision, recall and F1 per
page, averaged per site, then over sites (each site counts once). Tokens are
lower-cased `\\w+` runs. Pure Python (no Spark): the evaluation joins are small.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

_WORD = re.compile(r"\w+")
log = logging.getLogger(__name__)


def bag(text: str) -> Counter:
    return Counter(_WORD.findall(text.lower()))


def prf(extracted: str, gold: str) -> tuple[float, float, float]:
    return prf_of_bags(bag(extracted), bag(gold))


def prf_of_bags(got: Counter, want: Counter) -> tuple[float, float, float]:
    overlap = sum((got & want).values())
    n_got, n_want = sum(got.values()), sum(want.values())
    if n_got == 0 and n_want == 0:
        return 1.0, 1.0, 1.0
    p = overlap / n_got if n_got else 0.0
    r = overlap / n_want if n_want else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@dataclass
class Score:
    pages: int
    precision: float
    recall: float
    f1: float
    sites: int = 1


def mean_scores(scores: list[tuple[float, float, float]]) -> Score:
    n = len(scores)
    if not n:
        return Score(0, 0.0, 0.0, 0.0)
    return Score(n, *(sum(s[i] for s in scores) / n for i in range(3)))


def read_gold(path: str) -> dict[str, str]:
    """url -> gold text, from a gold.jsonl file. A URL given twice is scored
    once, with its last text; a warning names the file and lines."""
    gold: dict[str, str] = {}
    first: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                row = json.loads(line)
                url = row["url"]
                if url in gold:
                    same = "the same text" if gold[url] == row["gold_text"] else "another text; the last is scored"
                    log.warning("gold %s line %d: %s is also on line %d (%s)", path, n, url, first[url], same)
                else:
                    first[url] = n
                gold[url] = row["gold_text"]
    return gold


def site_means(scores_by_site: dict[str, list[tuple[float, float, float]]]) -> Score:
    """Pages averaged per site, then sites averaged (each site counts once)."""
    per_site = [mean_scores(v) for v in scores_by_site.values() if v]
    if not per_site:
        return Score(0, 0.0, 0.0, 0.0, 0)
    n = len(per_site)
    return Score(sum(s.pages for s in per_site), sum(s.precision for s in per_site) / n,
                 sum(s.recall for s in per_site) / n, sum(s.f1 for s in per_site) / n, n)


def gold_name(path: str) -> str:
    """A gold file's name in tables: its folder for .../NAME/gold.jsonl."""
    return os.path.basename(os.path.dirname(path)) if os.path.basename(path) == "gold.jsonl" else path


def gold_names(paths: list[str]) -> list[str]:
    """`gold_name` of each file, with as many parent folders as make the names
    differ: news/site1/gold.jsonl and sites/site1/gold.jsonl were both `site1`,
    and the second's score replaced the first's in the table and the mean (found
    in review)."""
    from collections import Counter

    real = [os.path.realpath(p) for p in paths]
    names = [gold_name(p) for p in paths]
    for depth in range(2, 64):
        twice = {n for n, c in Counter(names).items() if c > 1}
        if not twice:
            break
        names = ["/".join(os.path.dirname(p).split(os.sep)[-depth:])
                 if n in twice and os.path.basename(p) == "gold.jsonl" else n for p, n in zip(real, names)]
    return names


def evaluate_texts(texts: dict[str, str], gold_files: list[str], normalize=None, site_of=None,
                   gold_filter=None) -> dict:
    """Score extracted `texts` (url -> text) against each gold file: per page,
    averaged per site (`site_of(url)`; one site per file when None), then over
    sites; and the mean over files. Gold URLs are normalised with `normalize`
    before lookup; a page without extracted text scores as extracting nothing.
    `gold_filter` (str -> str), when given, rewrites each gold text first
    (`html.unescape`, for a gold that holds literal HTML entities).

    Besides the means, `per_site` (file -> site -> Score) and `per_page` (one
    row per gold page: file, url as looked up, site, precision, recall, f1,
    gold_tokens, tokens, found), worst F1 first: which pages and sites a mean
    lost on, and whether by text kept that the gold lacks (precision) or gold
    text removed (recall)."""
    per_file, per_site, per_page = {}, {}, []
    # one file given twice, under any spelling, is scored once (it counted twice in the mean)
    first: dict[str, str] = {}
    for p in gold_files:
        first.setdefault(os.path.realpath(p), p)  # the first spelling, in the order given
    files = list(first.values())
    for name, path in zip(gold_names(files), files):
        # one gold text per page as it is looked up: .../doc/ and .../doc/index.html
        # normalise alike and were scored twice (the last is scored, as read_gold does)
        by_key: dict[str, str] = {}
        for u, g in read_gold(path).items():
            key = (normalize(u) if normalize else u) or u
            if key in by_key:
                log.warning("gold %s: %s is the same page as an earlier URL once normalised; the last is scored",
                            path, u)
            by_key[key] = g
        by_site: dict[str, list] = defaultdict(list)
        for key, g in by_key.items():
            g = gold_filter(g) if gold_filter else g
            site = site_of(key) if site_of else ""
            got, want = bag(texts.get(key, "")), bag(g)  # (each text tokenised once)
            score = prf_of_bags(got, want)
            by_site[site].append(score)
            per_page.append({"file": name, "url": key, "site": site, "precision": score[0], "recall": score[1],
                             "f1": score[2], "gold_tokens": sum(want.values()), "tokens": sum(got.values()),
                             "found": key in texts})
        per_file[name] = site_means(by_site)
        per_site[name] = {site: mean_scores(v) for site, v in sorted(by_site.items())}
    # a gold file without pages has no score: it counted as F1 0 in the mean
    f1s = [s.f1 for s in per_file.values() if s.pages]
    per_page.sort(key=lambda row: (row["f1"], row["file"], row["url"]))
    return {"per_file": per_file, "mean_f1": sum(f1s) / len(f1s) if f1s else 0.0, "per_site": per_site,
            "per_page": per_page}
