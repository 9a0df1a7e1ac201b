"""Text: the words a memory is found by, in any script, and the times it names.

Owns: splitting text into words (CJK as character bigrams, accents folded, stemmed only where the language
is known), the terms a memory is indexed by (with the dates it says, in English and the languages of
`dates`), how long a text is (words and tokens, by script), and strict ISO 8601 times. Imports only
`tiers.errors`.
"""
