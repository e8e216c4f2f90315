"""A small GGUF v3 reader (numpy) for F32 llama files, and a writer that swaps new tensor data into
a copy of the original file (same names, shapes and offsets), which is all a trainer needs to hand
updated weights back to llama.cpp."""
import os
import struct

import numpy as np

# Value types of GGUF metadata: id -> struct format ('' for string, None for array).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY, _F32 = 8, 9, 0


class GGUF:
    """metadata: dict; tensors: name -> float32 array shaped (out, in) (GGUF lists dims innermost first)."""

    def __init__(self, path):
        self.path = path
        self.raw = open(path, "rb").read()
        self.pos = 0
        magic, version = self._take("<I"), self._take("<I")
        if magic != 0x46554747 or version != 3:
            raise ValueError(f"{path}: not a GGUF v3 file")
        n_tensors, n_meta = self._take("<Q"), self._take("<Q")
        self.metadata = {}
        for _ in range(n_meta):
            key = self._string()
            self.metadata[key] = self._value(self._take("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            dims = [self._take("<Q") for _ in range(self._take("<I"))]
            kind, offset = self._take("<I"), self._take("<Q")
            if kind != _F32:
                raise ValueError(f"{path}: tensor {name} is not F32 (type {kind})")
            infos.append((name, dims, offset))
        align = self.metadata.get("general.alignment", 32)
        self.data_start = (self.pos + align - 1) // align * align
        self.tensors, self.offsets = {}, {}
        for name, dims, offset in infos:
            count = int(np.prod(dims))
            start = self.data_start + offset
            self.offsets[name] = (start, count)
            self.tensors[name] = np.frombuffer(self.raw, dtype="<f4", count=count, offset=start).reshape(dims[::-1]).copy()

    def _take(self, fmt):
        (v,) = struct.unpack_from(fmt, self.raw, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _string(self):
        n = self._take("<Q")
        s = self.raw[self.pos : self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def _value(self, kind):
        if kind == _STRING:
            return self._string()
        if kind == _ARRAY:
            inner, n = self._take("<I"), self._take("<Q")
            return [self._value(inner) for _ in range(n)]
        return self._take(_SCALARS[kind])

    def write(self, path, tensors):
        """Writes a copy of this file with the given tensors' data replaced, via a temporary file and a
        rename (llama.cpp must never see a half-written file, nor a loaded file changed in place)."""
        out = bytearray(self.raw)
        for name, value in tensors.items():
            start, count = self.offsets[name]
            arr = np.ascontiguousarray(value, dtype="<f4").reshape(-1)
            if arr.size != count:
                raise ValueError(f"{name}: {arr.size} values, the file holds {count}")
            out[start : start + 4 * count] = arr.tobytes()
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(out)
        os.replace(tmp, path)
