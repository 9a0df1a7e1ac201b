"""The model: text embeddings (the packaged model on onnxruntime, others through fastembed), the graphs made
from it, and the optional cross-encoder that reads recall's best candidates again.

Owns everything that runs a neural network. Imports nothing of memtiers but `tiers.errors`, `tiers.files`
(its caches are small files written atomically) and `tiers.text` (how many words a text has, in any script, to
cut a long one in pieces), so it can be swapped or tested alone.
"""
