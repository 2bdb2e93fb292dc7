import json

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
