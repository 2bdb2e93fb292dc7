"""Page-level template detection (Chakrabarti, Kumar & Punera, WWW 2007): a
templateness model per DOM node, smoothed by regularised isotonic regression
over the tree.

- features.py: a page's DOM nodes and their cues (pure; the NODES table's rows);
- isotonic.py: the exact smoothing DP (pure);
- model.py: the model as numbers, judging a page, labels up the tree (pure);
- train.py: site-level labels on NODES, MLlib logistic regressions (Spark);
- stage.py: judging a run's pages, the modes (Spark) -> page_templateness.
"""
