"""The in-memory indexes: each tier's vectors, sign codes, BM25 postings and long memories' pieces, kept
beside its table so recall never scans LanceDB; and the store that keeps both tiers and their indexes in step.

The warm index (`warm`) is made of its rows (`rows`), postings (`postings`) and episode links (`episodes`);
the cold index (`cold`) of its codes, postings and the records' fields (`fields`), a search's hits in `hits`.
`saved` writes and opens copies of either, `synced` keeps each in step with its table through the change
feed, `columns` makes the tables' Arrow rows. `indexes` holds both tables with their indexes and notes each
write in the feed; `store`, the facade the namespace holds, writes and reads across the two tiers through it.
Beside it, each on the same indexes: `recovery` finishes what a crash left half done when the store is opened
for writing, `cold_reads` is what a search reads of cold, `unpieced` gives long records stored before pieces
were kept their pieces, and `meta` reads and writes store.json (the model the vectors were made by).

Imports the vocabulary, `tiers.text`, `tiers.model` and `tiers.storage`; never recall or the lifecycle.
"""
