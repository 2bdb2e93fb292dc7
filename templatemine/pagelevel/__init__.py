"""Page-level template detection (Chakrabarti, Kumar & Punera): a templateness model per DOM node, smoothed by regularised isotonic regression over the tree."""
