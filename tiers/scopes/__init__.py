"""Two scopes read together: the facts about the person, said once in the user scope every project of a data folder
shares, and the facts of one project, kept in its own namespace.

Owns which scope a memory or a profile key belongs to (`routing`), recall across both (`recall`), and a project's
memory with the user's beside it (`scoped`). May import the vocabulary, `text`, `storage`, `recall`, `lifecycle`,
`memory` and `transfer`.
"""
