import json
import os

from templatemine.evaluate.bow import evaluate_texts, prf


def test_prf_bag_of_words():
    assert prf("a b c", "a b c") == (1.0, 1.0, 1.0)
    p, r, f = prf("a a b x", "a b b")
    assert (p, r) == (0.5, 2 / 3) and abs(f - 4 / 7) < 1e-12
    assert prf("", "") == (1.0, 1.0, 1.0) and prf("a", "") == (0.0, 0.0, 0.0)


def test_evaluate_texts_per_file_then_mean(tmp_path):
    site = tmp_path / "site" / "gold.jsonl"
    site.parent.mkdir()
    site.write_text("\n".join(json.dumps(r) for r in [
        {"url": "HTTPS://Example.org/a/index.html", "gold_text": "main text"},
        {"url": "https://example.org/b", "gold_text": "other words"},
    ]))
    texts = {"https://example.org/a/": "main text", "https://example.org/b": "menu other words menu"}
    result = evaluate_texts(texts, [str(site)], normalize=lambda u: u.lower().replace("index.html", ""))
    score = result["per_file"]["site"]
    assert score.pages == 2 and abs(score.f1 - (1.0 + 2 / 3) / 2) < 1e-12
    assert result["mean_f1"] == score.f1


def test_pages_averaged_per_site_then_over_sites(tmp_path):
    gold = tmp_path / "news.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"url": "https://a.org/1", "gold_text": "x"},
        {"url": "https://a.org/2", "gold_text": "x"},
        {"url": "https://a.org/3", "gold_text": "x"},
        {"url": "https://b.org/1", "gold_text": "x"},
    ]))
    texts = {"https://a.org/1": "x", "https://a.org/2": "x", "https://a.org/3": "x", "https://b.org/1": "y"}
    score = evaluate_texts(texts, [str(gold)], site_of=lambda u: u.split("/")[2])["per_file"][str(gold)]
    # per page the mean would be 0.75; a.org's three pages count as one site
    assert score.sites == 2 and score.pages == 4 and score.f1 == 0.5


def test_each_site_and_page_is_scored_worst_page_first(tmp_path):
    gold = tmp_path / "news.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"url": "https://a.org/1", "gold_text": "one two three four"},
        {"url": "https://a.org/2", "gold_text": "five six"},
        {"url": "https://b.org/1", "gold_text": "seven"},
    ]))
    texts = {"https://a.org/1": "one two three four", "https://a.org/2": "five menu menu menu"}
    result = evaluate_texts(texts, [str(gold)], site_of=lambda u: u.split("/")[2])
    pages = result["per_page"]
    assert [(p["url"], p["site"], p["found"]) for p in pages] == [
        ("https://b.org/1", "b.org", False), ("https://a.org/2", "a.org", True), ("https://a.org/1", "a.org", True)]
    assert pages[0] == {"file": str(gold), "url": "https://b.org/1", "site": "b.org", "precision": 0.0,
                        "recall": 0.0, "f1": 0.0, "gold_tokens": 1, "tokens": 0, "found": False}
    assert (pages[1]["precision"], pages[1]["recall"], pages[1]["gold_tokens"], pages[1]["tokens"]) == (0.25, 0.5, 2, 4)
    sites = result["per_site"][str(gold)]
    assert list(sites) == ["a.org", "b.org"] and sites["a.org"].pages == 2 and sites["b.org"].f1 == 0.0
    assert abs(sites["a.org"].f1 - (1 + 1 / 3) / 2) < 1e-12
    # the file's mean is the mean of its sites'
    assert result["per_file"][str(gold)].f1 == (sites["a.org"].f1 + sites["b.org"].f1) / 2


def test_gold_filter_rewrites_each_gold_text(tmp_path):
    import html

    gold = tmp_path / "news.jsonl"  # a gold with literal entities, as news/cleanportaleval's
    gold.write_text(json.dumps({"url": "https://a.org/1", "gold_text": "It&rsquo;s Bob&#8217;s"}))
    texts = {"https://a.org/1": "It\u2019s Bob\u2019s"}  # what an extractor that decodes HTML outputs
    as_given = evaluate_texts(texts, [str(gold)])["per_file"][str(gold)]
    decoded = evaluate_texts(texts, [str(gold)], gold_filter=html.unescape)["per_file"][str(gold)]
    # as given, the gold's words are it, rsquo, s, bob, 8217, s: the text matches 4 of 6
    assert as_given.recall == 4 / 6 and as_given.precision == 1.0
    assert decoded.f1 == 1.0


def test_evaluate_arguments_both_forms(tmp_path):
    import pytest

    from templatemine.cli import _evaluate_paths, build_parser

    gold = tmp_path / "gold.jsonl"
    gold.write_text("")
    for argv in (["evaluate", "OUT", str(gold)], ["evaluate", "--pred", "OUT", "--gold", str(gold)]):
        assert _evaluate_paths(build_parser().parse_args(argv)) == ("OUT", [str(gold)])
    with pytest.raises(ValueError, match="gold file not found"):
        _evaluate_paths(build_parser().parse_args(["evaluate", "--pred", "OUT", "--gold", "nope.jsonl"]))
    with pytest.raises(ValueError, match="needs an output and gold files"):
        _evaluate_paths(build_parser().parse_args(["evaluate", "OUT"]))


def test_a_url_twice_in_a_gold_file_is_scored_once_and_said(tmp_path, caplog):
    from templatemine.evaluate.bow import read_gold

    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"url": "https://a.org/1", "gold_text": "first"},
        {"url": "https://a.org/2", "gold_text": "two"},
        {"url": "https://a.org/1", "gold_text": "second"},
    ]))
    with caplog.at_level("WARNING"):
        got = read_gold(str(gold))
    assert got == {"https://a.org/1": "second", "https://a.org/2": "two"}
    (warning,) = [r.getMessage() for r in caplog.records]
    assert f"gold {gold} line 3: https://a.org/1 is also on line 1 (another text; the last is scored)" == warning


def test_gold_files_of_one_folder_name_empty_files_and_normalised_twins(tmp_path, caplog):
    """news/site1/gold.jsonl and sites/site1/gold.jsonl were both `site1`: the second
    replaced the first, and the mean was over the wrong files; a gold file without
    pages counted as F1 0 in the mean; two gold URLs that normalise to one page
    were scored twice (found in review)."""
    paths = []
    for group, text in (("news", "right words"), ("sites", "gold words")):
        gold = tmp_path / group / "site1" / "gold.jsonl"
        gold.parent.mkdir(parents=True)
        gold.write_text(json.dumps({"url": f"https://{group}.org/a", "gold_text": text}) + "\n")
        paths.append(str(gold))
    empty = tmp_path / "empty" / "gold.jsonl"
    empty.parent.mkdir()
    empty.write_text("\n")
    texts = {"https://news.org/a": "right words", "https://sites.org/a": "wrong"}
    result = evaluate_texts(texts, [*paths, str(empty)])
    assert {k: v.f1 for k, v in result["per_file"].items()} == {"news/site1": 1.0, "sites/site1": 0.0, "empty": 0.0}
    assert result["mean_f1"] == 0.5  # over the two files with pages
    relative = os.path.relpath(paths[0])  # one file under two spellings: scored once
    again = evaluate_texts(texts, [relative, *paths, str(empty)])
    assert list(again["per_file"]) == ["news/site1", "sites/site1", "empty"] and again["mean_f1"] == 0.5
    twins = tmp_path / "twins.jsonl"
    twins.write_text("\n".join(json.dumps(r) for r in [{"url": "https://x.org/doc/", "gold_text": "a b"},
                                                        {"url": "https://x.org/doc/index.html", "gold_text": "a b"}]))
    score = evaluate_texts({"https://x.org/doc/": "a b"}, [str(twins)],
                           normalize=lambda u: u.replace("index.html", ""))["per_file"][str(twins)]
    assert score.pages == 1 and "same page as an earlier URL" in caplog.text
