"""The in-memory indexes: each tier's vectors, sign codes, BM25 postings and long memories' pieces, kept
beside its table so recall never scans LanceDB; and the store that keeps both tiers and their indexes in step.

Imports the vocabulary, `tiers.text`, `tiers.model` and `tiers.storage`; never recall or the lifecycle.
"""
