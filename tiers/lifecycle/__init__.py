"""The lifecycle: how alive a record is (heat), the rules that move records between tiers, write-time
classification, projects, and the profile's candidates and flags kept in the ledger.

The rules are pure functions of (records, usage, now, settings). Imports the vocabulary, `tiers.text`,
`tiers.storage` and `tiers.index`; never recall or a namespace.
"""
