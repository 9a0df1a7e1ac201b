"""The in-memory indexes: each tier's vectors, sign codes, BM25 postings and long memories' pieces, kept
beside its table so recall never scans LanceDB; and the store that keeps both tiers and their indexes in step.

The warm index (`warm`) is made of its rows (`rows`), postings (`postings`) and episode links (`episodes`);
the cold index (`cold`) of its codes, postings and the records' fields (`fields`), a search's hits in `hits`.
`saved` writes and opens copies of either, `synced` keeps each in step with its table through the change
feed, `columns` makes the tables' Arrow rows, and `store` writes and reads across the two tiers.

Imports the vocabulary, `tiers.text`, `tiers.model` and `tiers.storage`; never recall or the lifecycle.
"""
