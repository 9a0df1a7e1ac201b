"""Privacy: credentials found before anything is stored, and a data folder private to its user.

Imports the vocabulary only.
"""
