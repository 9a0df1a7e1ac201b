"""Recall's ranking: fuse meaning and words into one order, pack the best into the model's token budget,
and put the later word on a question above the older one. Pure functions of the rows they are given.

Imports the vocabulary, `tiers.text`, `tiers.model`, `tiers.storage` (the profile's entries) and
`tiers.index` (the pieces' scores); never the lifecycle or a namespace.
"""
