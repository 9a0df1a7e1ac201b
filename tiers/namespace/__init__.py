"""One namespace at work: its parts (`Parts`: profile, ledger, tiers, lock, model), and the operations
`Memory` is a facade over: the write path, search, profile editing, the moves and the backfill, with the
values they return.

Imports every part below it; only `tiers.memory`, `tiers.browse` and `tiers.transfer` import it.
"""
