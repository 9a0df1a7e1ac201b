"""The model: text embeddings (the packaged model on onnxruntime, others through fastembed), the graphs made
from it, and the optional cross-encoder that reads recall's best candidates again.

Owns everything that runs a neural network. Imports nothing of memtiers but `tiers.errors` and `tiers.files`
(its caches are small files written atomically), so it can be swapped or tested alone.
"""
