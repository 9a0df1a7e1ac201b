"""Storage: what is on disk and who may write it. The LanceDB tables of the two tiers, the ledger (SQLite:
use counts, the move log, write notes), the hot profile's JSON file, and the locks every process shares.

Imports the vocabulary (`tiers.records`, `tiers.errors`, `tiers.files`) and `tiers.text`; never an index,
recall or the lifecycle.
"""
