"""The templateness model as plain numbers, and a page scored with it (pure
Python + numpy, no pyspark).

Chakrabarti, Kumar & Punera ("Learning the templateness classifier" slide):
logistic regression, "a simple classifier, avoids fitting noise in the data";
templateness = probability of the template class; "separate classifiers
learned for nodes of different sizes". Training is a Spark MLlib job
(pagelevel/train.py); what it saves beside MLlib's own model directories is
`model.json`, the bands' coefficients, so that a page can be scored anywhere (a
Spark task, a crawler process) with one dot product per node and no JVM. A unit
test holds the two equal.

Label bias ("Labeled data has a bias: some template DOM nodes labeled as
non-templates; false negatives are noise"): site-level labels mark a node
template only when its block recurs across the site, so per-page boilerplate
(share bars, "related stories", comments) is labelled content. The template
labels are trusted and the content labels are treated as unlabelled: Elkan &
Noto's positive-unlabelled correction ("Learning classifiers from only positive
and unlabeled data", KDD 2008, Lemma 1): if labelled templates are a random
sample of all templates, p(template | x) = p(labelled | x) / k with k =
p(labelled | template), estimated as the mean classifier output over held-out
labelled templates. `pu_k` holds k per band (1.0: no correction).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from itertools import compress
from typing import Callable

import numpy as np

from templatemine import localfs
from templatemine.pagelevel.features import FEATURES, FORMAT, FORMAT_CHANGES
from templatemine.pagelevel.isotonic import smooth, smooth_values
from templatemine.warc.inputs import is_remote, local_path

MODEL_JSON = "model.json"
LATEST = "LATEST"  # in a model root: the name of the newest version directory
DEFAULT_MODEL = "default_model.json"  # package data of templatemine.pagelevel


def _default_model() -> "PageModel":
    """The shipped model, read as package data: a path beside __file__ could not be
    opened when the package came in a zip (`spark-submit --py-files
    templatemine.zip`), and run/pagelevel/nightly failed after extract and detect."""
    from importlib import resources

    text = resources.files(__package__).joinpath(DEFAULT_MODEL).read_text(encoding="utf-8")
    return PageModel.from_json(text, f"templatemine/pagelevel/{DEFAULT_MODEL}")


@dataclass(frozen=True)
class PageModel:
    """Per size band (subtree tokens in [lower, next lower)): coefficients on the
    raw features (MLlib reports them unscaled) and an intercept."""

    version: str
    features: tuple[str, ...]
    band_lower: tuple[int, ...]  # ascending, first 0
    coefficients: tuple[tuple[float, ...], ...]
    intercepts: tuple[float, ...]
    pu_k: tuple[float, ...]  # Elkan-Noto k per band (1.0: uncorrected)
    trained_on: dict = field(default_factory=dict)  # provenance: outputs, rows, labels, timings

    def check(self) -> None:
        if tuple(self.features) != FEATURES:
            missing = sorted(set(FEATURES) ^ set(self.features))
            raise ValueError(f"model {self.version} was trained on other features (differ: {missing[:8]}); "
                             "retrain it with `templatemine train`")
        n = len(self.band_lower)
        lower = list(self.band_lower)
        if not n or not (len(self.coefficients) == len(self.intercepts) == len(self.pu_k) == n) or lower[0] != 0 \
                or lower != sorted(set(lower)):
            raise ValueError(f"model {self.version}: inconsistent bands (lower bounds {lower}, ascending from 0; "
                             f"{len(self.coefficients)} coefficient rows, {len(self.intercepts)} intercepts, "
                             f"{len(self.pu_k)} k)")
        if any(len(row) != len(FEATURES) for row in self.coefficients):
            raise ValueError(f"model {self.version}: a band's coefficients are not one per feature ({len(FEATURES)})")
        numbers = [v for row in self.coefficients for v in row] + list(self.intercepts)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in numbers):
            raise ValueError(f"model {self.version}: a coefficient or intercept is not a finite number")
        if not all(isinstance(k, (int, float)) and 0 < k <= 1 for k in self.pu_k):
            raise ValueError(f"model {self.version}: Elkan-Noto's k must be in (0, 1] (P(labelled | template)), "
                             f"got {list(self.pu_k)}")

    def bands(self, n_tokens: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(self.band_lower), n_tokens, side="right") - 1

    def probability(self, features: np.ndarray, n_tokens: np.ndarray) -> np.ndarray:
        """p(labelled template | x): the logistic regression of each node's band."""
        w = np.asarray(self.coefficients, dtype=np.float64)
        b = np.asarray(self.intercepts, dtype=np.float64)
        band = self.bands(np.asarray(n_tokens))
        z = np.einsum("ij,ij->i", features, w[band]) + b[band]
        return 1.0 / (1.0 + np.exp(-z))

    def templateness(self, features: np.ndarray, n_tokens: np.ndarray, pu: bool = True,
                     labelled_content: np.ndarray | None = None) -> np.ndarray:
        """P(template | x). The classifier learnt g(x) = P(labelled template | x)
        from site-level labels that miss some templates (the seed's false
        negatives); with `pu`, Elkan & Noto's correction (Lemma 1: P(template |
        x) = g(x) / k, k = P(labelled template | template)). A node the
        site-level run did label content (`labelled_content`, hybrid mode) is an
        example known to be unlabelled, and the same paper gives its
        probability, their weight of an unlabelled example: P(template | x, not
        labelled) = (1 - k) / k * g / (1 - g), 0 where k = 1 (a band left
        uncorrected trusts the labels)."""
        p = self.probability(features, n_tokens)
        if pu:
            k = np.asarray(self.pu_k)[self.bands(np.asarray(n_tokens))]
            corrected = np.minimum(p / k, 1.0)
            if labelled_content is not None:
                odds = p / np.maximum(1.0 - p, 1e-12)
                corrected = np.where(labelled_content, np.minimum((1.0 - k) / k * odds, 1.0), corrected)
            p = corrected
        return p

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **asdict(self)}, indent=1)

    @classmethod
    def from_json(cls, text: str, where: str) -> "PageModel":
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{where}: not a page-level model (not JSON: {exc})") from None
        found = raw.pop("format", None) if isinstance(raw, dict) else None
        if found != FORMAT:
            known = isinstance(found, int) and found in FORMAT_CHANGES
            why = f" (format {found}: trained {FORMAT_CHANGES[found]}; train it again)" if known else ""
            raise ValueError(f"{where}: not a format-{FORMAT} page-level model{why}")
        try:
            model = cls(raw["version"], tuple(raw["features"]), tuple(raw["band_lower"]),
                        tuple(tuple(c) for c in raw["coefficients"]), tuple(raw["intercepts"]), tuple(raw["pu_k"]),
                        raw.get("trained_on", {}))
            model.check()
        except KeyError as exc:
            raise ValueError(f"{where}: page-level model without {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        return model

    def save(self, directory: str, files: "ModelFiles | None" = None) -> str:
        """DIRECTORY/model.json, written whole (a temporary file, then a rename)."""
        files = files or LOCAL_FILES
        path = files.join(directory, MODEL_JSON)
        files.replace_text(path, self.to_json())
        return path

    @classmethod
    def load(cls, directory: str, files: "ModelFiles | None" = None) -> "PageModel":
        files = files or LOCAL_FILES
        path = directory if directory.endswith(".json") else files.join(directory, MODEL_JSON)
        text = files.read_text(path)
        if text is None:
            raise ValueError(f"no page-level model at {path} (train one with `templatemine train`)")
        return cls.from_json(text, path)


@dataclass(frozen=True)
class ModelFiles:
    """How a model root is read and written: local files here (LOCAL_FILES), or
    Hadoop's FileSystem of a Spark session (train.model_files) for a model root
    on hdfs://, s3a:// or any scheme the session can reach. This module stays
    without pyspark: the Spark side passes its functions in."""

    read_text: Callable[[str], str | None]  # None: no such file
    replace_text: Callable[[str, str], None]  # the whole file at once

    @staticmethod
    def join(directory: str, name: str) -> str:
        return directory.rstrip("/") + "/" + name


def _read_local(path: str) -> str | None:
    try:
        with open(local_path(path), encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:  # a directory, a file in place of a folder, no permission
        raise ValueError(f"page-level model: cannot read {path} ({exc.__class__.__name__}: {exc})") from None


def _replace_local(path: str, text: str) -> None:
    localfs.replace_text(local_path(path), text)


LOCAL_FILES = ModelFiles(_read_local, _replace_local)


def load_model(path: str = "", files: ModelFiles | None = None) -> PageModel:
    """The model at PATH: a model root (its LATEST version), a version directory,
    or a model.json; "" is the model shipped with the package. FILES reads a
    PATH that is not on local disk (a Spark session's: train.model_files)."""
    if not path:
        return _default_model()
    if files is None:
        if is_remote(path):
            raise ValueError(f"page-level model {path}: a model on {path.split('://')[0]}:// is read through a "
                             "Spark session (templatemine run / pagelevel); copy it to a local folder to score "
                             "outside Spark")
        files = LOCAL_FILES
    path = path.rstrip("/")
    if path.endswith(".json"):
        return PageModel.load(path, files)
    here = files.join(path, MODEL_JSON)
    text = files.read_text(here)  # read once: on a Hadoop file system each read is a round trip
    if text is not None:
        return PageModel.from_json(text, here)
    latest = files.read_text(files.join(path, LATEST))
    if latest is None:
        raise ValueError(f"no page-level model at {here} (train one with `templatemine train`)")
    if not latest.strip():
        raise ValueError(f"page-level model root {path}: {LATEST} is empty; it should name a version directory "
                         "(write one's name into it, or train again)")
    named = files.join(files.join(path, latest.strip()), MODEL_JSON)
    text = files.read_text(named)
    if text is None:
        raise ValueError(f"page-level model root {path}: {LATEST} names {latest.strip()}, which has no "
                         f"{MODEL_JSON} (a training that did not finish? point {LATEST} at another version)")
    return PageModel.from_json(text, named)


@dataclass(frozen=True)
class Scoring:
    """How a page is judged from its node scores (config `[pagelevel]`)."""

    smoothing: float = 0.5  # c of the regularised isotonic regression (0 still enforces monotonicity)
    smooth: bool = True  # False: the raw classifier, each node alone
    grid: float = 0.05  # scores rounded to this grid before smoothing (k <= 1/grid + 3 values, _on_grid)
    threshold: float = 0.5  # a node is template when its (smoothed) templateness is at least this
    pu: bool = True  # Elkan-Noto correction of the label bias
    unlikely: bool = True  # unlikely candidates' subtrees go whatever the model says (features.UNLIKELY_CANDIDATES)
    article: bool = True  # text outside the page's article goes (features._article), see judge_page
    site_labels: bool = True  # hybrid: nodes labelled content take P(template | x, not labelled), see judge_page
    penalty: str = "sections"  # c per section (isotonic.smooth) or per distinct value (isotonic.smooth_values)

    def __post_init__(self):
        if self.penalty not in ("sections", "values"):
            raise ValueError(f"smoothing penalty {self.penalty!r}: one of sections, values")


# Readability's DEFAULT_CHAR_THRESHOLD: when removing the unlikely candidates leaves
# less text than this, the page is judged again without them (Readability retries
# without FLAG_STRIP_UNLIKELYS) and the longer clean text is kept
UNLIKELY_MIN_CHARS = 500


@dataclass
class PageResult:
    x: np.ndarray  # raw templateness per node
    y: np.ndarray  # smoothed (without smoothing x), the nodes a rule or the site-level run forced entering at 1
    template: np.ndarray  # bool per node: the node (its whole subtree) is template
    text_template: np.ndarray  # bool per node: its own text is removed
    n_sections: int
    clean_text: str
    template_tokens: int
    tokens: int
    unlikely_tokens: int = 0  # of template_tokens: in unlikely candidates, not removed by the site-level run
    outside_article_tokens: int = 0  # of template_tokens: outside the article, kept by everything before
    site_template_tokens: int = 0  # of template_tokens: own text the site-level run removed (`forced_text`)
    # the smoothed score of each node's own text (its DOM text node's, which may sit
    # under a content child's threshold apart from its element's y): what
    # `text_template` thresholds before the article rule and `forced_text`
    text_y: np.ndarray | None = None


def document_order(parent, texts, words, at) -> Callable[[list], str]:
    """The clean text of a set of kept nodes (a bool per node): their own
    texts in document order. A node's own text may go on after a child node
    (`<div>Intro <p>para</p> more</div>`, or text around an element Figure 3
    splits out), so the preorder of the nodes is not the order of the words:
    `at` (PageArrays.at, NODES.text_at) gives, per node, its parent's own words
    before it, and the own texts are cut there into pieces, once per page
    (numpy, and a loop over the nodes cut: linear in the page's nodes).
    Where no node has its parent's words after it (and with `at` None: nodes
    written before the column) the pieces are the own texts in preorder."""
    n = len(texts)

    def preorder(kept) -> str:
        return " ".join(filter(None, compress(texts, kept)))

    if at is None or n < 2:
        return preorder
    p = np.asarray(parent, dtype=np.int64)
    a = np.asarray(at, dtype=np.int64)
    early = np.flatnonzero(a[1:] < words[p[1:]]) + 1  # nodes with words of their parent after them
    if not len(early):
        return preorder
    # every piece gets a key (place, rank): it goes just before node `place`
    # (n: at the end), after the pieces there of nodes nested deeper (rank =
    # -node: a descendant has the larger preorder index); a node's first piece
    # goes at its own index, after what ends there (rank n)
    cut = np.unique(p[early])
    has_words = words > 0
    has_words[cut] = False
    whole = np.flatnonzero(has_words).tolist()
    # children grouped by parent, each group in document order; next siblings
    kids = np.argsort(p[1:], kind="stable") + 1
    grouped = p[kids]
    nxt = np.full(n, -1, dtype=np.int64)
    same = grouped[:-1] == grouped[1:]
    nxt[kids[:-1][same]] = kids[1:][same]
    first = np.searchsorted(grouped, cut, "left").tolist()
    last = np.searchsorted(grouped, cut, "right").tolist()
    kids_l, at_l, nxt_l, p_l, w = kids.tolist(), a.tolist(), nxt.tolist(), p.tolist(), words.tolist()
    after: dict[int, int] = {}

    def beyond(i: int) -> int:
        """The first node after i's subtree: its next sibling, else its nearest
        ancestor's next sibling (n: none)."""
        climbed = []
        while True:
            r = after.get(i)
            if r is None:
                r = n if i == 0 else nxt_l[i]
            if r >= 0:
                break
            climbed.append(i)
            i = p_l[i]
        for j in climbed:
            after[j] = r
        return r

    places, ranks, owner = list(whole), [n] * len(whole), list(whole)
    pieces = [texts[j] for j in whole]
    for i, f, l in zip(cut.tolist(), first, last):
        ks = kids_l[f:l]
        wi = w[i]
        split = texts[i].split()
        lo = 0
        for hi, place, rank in zip([min(at_l[k], wi) for k in ks] + [wi], [i] + ks[1:] + [beyond(i)],
                                   [n] + [-i] * len(ks)):
            if hi > lo:
                pieces.append(" ".join(split[lo:hi]))
                places.append(place)
                ranks.append(rank)
                owner.append(i)
                lo = hi
    order = np.lexsort((np.array(ranks, dtype=np.int64), np.array(places, dtype=np.int64)))
    ordered = [pieces[k] for k in order.tolist()]
    owner_of = np.array(owner, dtype=np.int64)[order]

    def in_order(kept) -> str:
        return " ".join(compress(ordered, np.asarray(kept, dtype=bool)[owner_of].tolist()))

    return in_order


def judge_page(parent, features, n_tokens, texts, model: PageModel, scoring: Scoring = Scoring(),
               forced=None, forced_text=None, unlikely=None, article=None, content=None, at=None) -> PageResult:
    """Score a page's nodes, smooth over the tree, and keep the own text of the
    nodes below the threshold. Hybrid mode: `forced` (bool per node) marks the
    nodes whose whole subtree the site-level run found to be template, and
    `forced_text` those whose own text it did; both go whatever the model says.
    `content` (bool per node) marks the nodes it labelled content (subtree label
    0, as in training): with `scoring.site_labels` (and the correction on) the
    model judges them knowing that, `PageModel.templateness`.
    `unlikely` (bool per node, PageArrays.unlikely) marks the subtrees of
    unlikely candidates, per-page boilerplate the site-level labels never
    teach: with `scoring.unlikely` they go too, unless that leaves under
    UNLIKELY_MIN_CHARS characters and judging without them leaves more.
    `article` (bool per node, PageArrays.article) marks the page's article
    (Readability's top candidate, the siblings it joins, the <h1>): with
    `scoring.article`, what the model keeps outside it goes too, when the
    article holds at least half of the kept words and UNLIKELY_MIN_CHARS
    characters (a page whose kept text is mostly elsewhere, such as a
    documentation page of many tables, where one table wins, keeps it). The
    article changes `text_template` and the text, not the model's `template`.
    A page the smoothing would leave without text while the raw classifier
    keeps some is judged raw (its y is then x, with the nodes the rules or the
    site-level run removed at 1; one section per node).
    `at` (PageArrays.at) puts the clean text in document order
    (`document_order`; None: the own texts in preorder)."""
    words = np.fromiter(map(len, map(str.split, texts)), dtype=np.int64, count=len(texts))  # own tokens per node
    join = document_order(parent, texts, words, at)
    known = np.asarray(content, dtype=bool) if content is not None and scoring.site_labels else None
    f = np.asarray(features, dtype=np.float64).reshape(len(texts), len(model.features))
    x = model.templateness(f, np.asarray(n_tokens, dtype=np.int64), scoring.pu, known)  # once, for every pass
    r = _judge_unlikely(parent, x, texts, words, join, scoring, forced, forced_text, unlikely)
    if forced_text is not None:
        r.site_template_tokens = int(words[np.asarray(forced_text, dtype=bool)].sum())
    if article is None or not scoring.article:
        return r
    kept = ~r.text_template & (words > 0)
    inside = kept & np.asarray(article, dtype=bool)
    outside = kept & ~inside
    if not outside.any():
        return r
    chars_in = sum(len(t) + 1 for t in compress(texts, inside.tolist())) - 1  # of the clean text it would leave
    if 2 * int(words[inside].sum()) < int(words[kept].sum()) or chars_in < UNLIKELY_MIN_CHARS:
        return r
    cut = int(words[outside].sum())
    r.text_template = r.text_template | outside
    r.clean_text = join(inside.tolist())
    r.template_tokens += cut
    r.outside_article_tokens = cut
    return r


def _judge_unlikely(parent, x, texts, words, join, scoring: Scoring, forced, forced_text, unlikely) -> PageResult:
    """judge_page before the article: the model's scores `x`, with the unlikely candidates."""
    u = np.asarray(unlikely, dtype=bool) if unlikely is not None and scoring.unlikely else None
    if u is None or not u.any():
        return _judge_guarded(parent, x, texts, words, join, scoring, forced, forced_text)
    site = forced if forced is not None else np.zeros(len(u), dtype=bool)
    r = _judge_guarded(parent, x, texts, words, join, scoring, site | u, forced_text)
    if len(r.clean_text) < UNLIKELY_MIN_CHARS:
        without = _judge_guarded(parent, x, texts, words, join, scoring, forced, forced_text)
        if len(without.clean_text) > len(r.clean_text):
            return without
    keep_site = ~site if forced_text is None else ~(site | np.asarray(forced_text, dtype=bool))
    r.unlikely_tokens = int(words[u & keep_site & r.text_template].sum())
    return r


def _judge_guarded(parent, x, texts, words, join, scoring: Scoring, forced, forced_text) -> PageResult:
    """One pass (`_judge`), judged raw when the smoothing would leave no text
    while the raw classifier keeps some: the smoothing makes the page's
    decisions coherent; it must not erase a page the classifier keeps text on
    (a section of many small template-like nodes outvoting the few paragraphs
    beside it: the unweighted L1, with c charged per section, not per distinct
    value as the seed charges it, isotonic.py), as Readability retries. Applied to
    each pass, so that the unlikely rule's retry compares guarded passes (found
    in review: a page the smoothing emptied with the rule was judged without
    it, keeping its comments, before the raw pass with the rule was tried)."""
    r = _judge(parent, x, texts, words, join, scoring, forced, forced_text)
    if scoring.smooth and not r.clean_text and words.any():
        raw = _judge(parent, x, texts, words, join, replace(scoring, smooth=False), forced, forced_text)
        if raw.clean_text:
            return raw
    return r


def _on_grid(x: np.ndarray, grid: float, threshold: float) -> np.ndarray:
    """Scores rounded to the grid (the DP's k at most 1/grid + 3), none carried
    across the threshold: rounded to the nearest grid point, a score in
    [threshold - grid/2, threshold) reached the threshold and was judged template,
    so with c = 0, which only enforces monotonicity, smoothing removed text the
    classifier kept (found in review: 9 news pages, 155 words). Such a score takes
    a value just under the threshold, by a thousandth of the grid; one that
    rounding would carry under it (a threshold off the grid), the threshold itself.
    Not the next float under it (nextafter): the DP calls costs within 1e-12
    relative a tie and takes the smaller value, so a list of ten items at the
    threshold and one such item cost "the same" at either value and the whole
    list was kept, against the optimum (found in review: 14 corpus pages, 238
    words)."""
    if grid <= 0:
        return x
    r = np.round(x / grid) * grid
    # a grid point meant to be the threshold can come out an ulp off it (11 * 0.03 =
    # 0.32999999999999996 for 0.33), a second value that ties with it (found in review)
    r = np.where(np.abs(r - threshold) <= grid * 1e-6, threshold, r)
    r = np.where((x < threshold) & (r >= threshold), threshold - grid * 1e-3, r)
    return np.where((x >= threshold) & (r < threshold), threshold, r)


def _judge(parent, x, texts, words, join, scoring: Scoring, forced, forced_text) -> PageResult:
    """One pass: the scores `x` (the forced nodes at 1), smoothed, thresholded.
    The result's x is the model's, untouched: PAGE_TEMPLATENESS reports it as
    the raw templateness, and y and the flags show what the rules did (found in
    review: a node the unlikely rule removed read x = 1.0, as if the model had
    been certain)."""
    raw, x = x, (x if forced is None else np.where(forced, 1.0, x))
    n = len(texts)
    if scoring.smooth and n:
        # the own text of a node with children is a leaf of its own (a DOM text
        # node), scored like its element: the element is template only if all its
        # children are, yet its own words can be template under a content child
        p = np.asarray(parent, dtype=np.int64)
        has_children = np.zeros(n, dtype=bool)
        has_children[p[p >= 0]] = True
        split = np.flatnonzero(has_children & np.array([bool(t) for t in texts]))
        xt = np.concatenate([x, x[split]])
        xr = _on_grid(xt, scoring.grid, scoring.threshold)
        s = (smooth_values if scoring.penalty == "values" else smooth)(np.concatenate([p, split]), xr,
                                                                        scoring.smoothing)
        y, n_sections = np.asarray(s.y[:n]), s.n_sections
        text_y = y.copy()
        text_y[split] = s.y[n:]
    else:
        y = text_y = x
        n_sections = n
    template = y >= scoring.threshold
    text_template = text_y >= scoring.threshold
    if forced is not None:
        template = template | forced
        text_template = text_template | forced
    if forced_text is not None:
        text_template = text_template | forced_text
    kept = join((~text_template & (words > 0)).tolist())
    return PageResult(raw, y, template, text_template, n_sections, kept, int(words[text_template].sum()),
                      int(words.sum()), text_y=np.where(forced, 1.0, text_y) if forced is not None else text_y)


def judge_html(html: str, model: PageModel, scoring: Scoring = Scoring()) -> PageResult:
    """Page mode outside Spark: parse, nodes, model, smoothing; the same
    decisions the Spark stage makes from the NODES table."""
    from templatemine.pagelevel.features import page_nodes

    a = page_nodes(html, arrays=True)
    return judge_page(a.parent, a.features, a.n_tokens, a.texts, model, scoring, unlikely=a.unlikely,
                      article=a.article, at=a.at)


def subtree_labels(parent, own_label) -> np.ndarray:
    """Site-level labels of nodes (1 template, 0 content, -1 unlabelled) from the
    labels of their own text: Chakrabarti et al.'s monotonicity ("a DOM node is a
    template if and only if all its children are templates"), so a node is
    template iff every labelled own text in its subtree is, content iff any is
    content. `parent[i] < i` (preorder)."""
    lab = np.asarray(own_label, dtype=np.int64).copy()
    any_content = lab == 0
    any_template = lab == 1
    p = np.asarray(parent, dtype=np.int64)
    for i in range(len(lab) - 1, 0, -1):
        q = p[i]
        any_content[q] |= any_content[i]
        any_template[q] |= any_template[i]
    return np.where(any_content, 0, np.where(any_template, 1, -1))
