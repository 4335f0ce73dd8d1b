"""`qd.tools.PLYWriter`: numpy arrays as PLY files (vertices with named channels, and triangle
or quad faces), binary in the machine's byte order or ASCII.

The writer is quadrants' format exactly: the same header lines, channel names (`x`, `nx`,
`red`, a multi-column channel `key` as `key_1`, `key_2`, ...), value types and the same bytes,
so a viewer or a script that reads one reads the other. Binary rows are built as one
structured numpy array per element kind rather than value by value.
"""

from __future__ import annotations

import sys

import numpy as np

# PLY's scalar types and the numpy type each channel's values are converted to
_TYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
          "uint": np.uint32, "float": np.float32, "double": np.float64}


class PLYWriter:
    """Collects vertex channels, faces and face channels, then writes them (`export`,
    `export_ascii`, or numbered frames with `export_frame` / `export_frame_ascii`).

    Args:
        num_vertices: the number of vertices (positive).
        num_faces: the number of faces (0: a point cloud).
        face_type: `"tri"` or `"quad"`.
        comment: the header's comment line.
    """

    def __init__(self, num_vertices: int, num_faces: int = 0, face_type: str = "tri",
                 comment: str = "created by PLYWriter"):
        assert num_vertices > 0, "num_vertices should be greater than 0"
        assert num_faces >= 0, "num_faces shouldn't be less than 0"
        assert face_type in ("tri", "quad"), "Only tri and quad faces are supported for now"
        self.num_vertices = num_vertices
        self.num_faces = num_faces
        self.face_type = face_type
        self.comment = comment
        self.ply_supported_types = list(_TYPES)
        self.vertex_channels: list[str] = []
        self.vertex_data_type: list[str] = []
        self.vertex_data: list[np.ndarray] = []
        self.face_channels: list[str] = []
        self.face_data_type: list[str] = []
        self.face_data: list[np.ndarray] = []
        self.face_indices = -np.ones((num_faces, self._corners()), dtype=np.int32)  # unset: refused on export

    @property
    def num_vertex_channels(self) -> int:
        return len(self.vertex_channels)

    @property
    def num_face_channels(self) -> int:
        return len(self.face_channels)

    def _corners(self) -> int:
        return 3 if self.face_type == "tri" else 4

    def _add(self, names: list[str], types: list[str], columns: list[np.ndarray], rows: int, what: str,
             key: str, data_type: str, data: np.ndarray) -> None:
        """A channel of `rows` values, or of several columns (`key_1`, `key_2`, ...) for 2-D data."""
        if data_type not in _TYPES:
            print("Unknown type " + data_type + " detected, skipping this channel")
            return
        data = np.asarray(data)
        if data.ndim == 1:
            assert data.size == rows, f"The dimension of the {what} channel is not correct"
            parts = [(key, data)]
        else:
            k = data.size // rows
            assert data.ndim == 2 and data.size == k * rows, f"The dimension of the {what} channel is not correct"
            table = data.reshape(rows, k)
            parts = [(f"{key}_{i + 1}", table[:, i]) for i in range(k)]
        for name, column in parts:
            if name in names:
                print("WARNING: duplicate key " + name + " detected")
            names.append(name)
            types.append(data_type)
            columns.append(_TYPES[data_type](column))

    def add_vertex_channel(self, key: str, data_type: str, data: np.ndarray) -> None:
        """A channel of per-vertex values of PLY type `data_type` (`"float"`, `"int"`, ...)."""
        self._add(self.vertex_channels, self.vertex_data_type, self.vertex_data, self.num_vertices, "vertex",
                  key, data_type, data)

    def add_vertex_pos(self, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
        """The vertices' coordinates (required before exporting)."""
        for key, v in (("x", x), ("y", y), ("z", z)):
            self.add_vertex_channel(key, "float", v)

    def add_vertex_normal(self, nx: np.ndarray, ny: np.ndarray, nz: np.ndarray) -> None:
        for key, v in (("nx", nx), ("ny", ny), ("nz", nz)):
            self.add_vertex_channel(key, "float", v)

    def add_vertex_vel(self, vx: np.ndarray, vy: np.ndarray, vz: np.ndarray) -> None:
        for key, v in (("vx", vx), ("vy", vy), ("vz", vz)):
            self.add_vertex_channel(key, "float", v)

    def add_vertex_color(self, r: np.ndarray, g: np.ndarray, b: np.ndarray) -> None:
        for key, v in (("red", r), ("green", g), ("blue", b)):
            self.add_vertex_channel(key, "float", v)

    def add_vertex_alpha(self, alpha: np.ndarray) -> None:
        self.add_vertex_channel("Alpha", "float", alpha)

    def add_vertex_rgba(self, r: np.ndarray, g: np.ndarray, b: np.ndarray, a: np.ndarray) -> None:
        self.add_vertex_color(r, g, b)
        self.add_vertex_alpha(a)

    def add_vertex_id(self) -> None:
        """Each vertex's index, as channel `id`."""
        self.add_vertex_channel("id", "int", np.arange(self.num_vertices))

    def add_vertex_piece(self, piece: np.ndarray) -> None:
        self.add_vertex_channel("piece", "int", piece)

    def add_faces(self, indices: np.ndarray) -> None:
        """The faces' vertex indices, `num_faces` times 3 (or 4) in any shape."""
        corners = self._corners()
        indices = np.asarray(indices)
        assert corners * self.num_faces == indices.size, "The dimension of the face vertices is not correct"
        self.face_indices = np.reshape(indices, (self.num_faces, corners)).astype(np.int32)

    def add_face_channel(self, key: str, data_type: str, data: np.ndarray) -> None:
        """A channel of per-face values of PLY type `data_type`."""
        self._add(self.face_channels, self.face_data_type, self.face_data, self.num_faces, "face",
                  key, data_type, data)

    def add_face_id(self) -> None:
        self.add_face_channel("id", "int", np.arange(self.num_faces))

    def add_face_piece(self, piece: np.ndarray) -> None:
        self.add_face_channel("piece", "int", piece)

    def sanity_check(self) -> None:
        """Positions are given and every face names existing vertices."""
        for axis in "xyz":
            assert axis in self.vertex_channels, "The vertex pos channel is missing"
        if self.num_faces > 0:
            idx = self.face_indices
            assert bool(np.all((idx >= 0) & (idx < self.num_vertices))), "The face indices are invalid"

    def print_header(self, path: str, _format: str) -> None:
        """Write (replace) the header of a file in `_format` (`ascii`, `binary_little_endian`)."""
        lines = ["ply", f"format {_format} 1.0", f"comment {self.comment}", f"element vertex {self.num_vertices}"]
        lines += [f"property {t} {n}" for t, n in zip(self.vertex_data_type, self.vertex_channels)]
        if self.num_faces != 0:
            lines += [f"element face {self.num_faces}", "property list uchar int vertex_indices"]
            lines += [f"property {t} {n}" for t, n in zip(self.face_data_type, self.face_channels)]
        lines.append("end_header")
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))

    @staticmethod
    def _rows(columns: list[tuple[str, np.ndarray]], n: int) -> bytes:
        """The rows of `columns` packed one after another, each value in its own type."""
        table = np.empty(n, dtype=np.dtype([(name, col.dtype) for name, col in columns]))
        for name, col in columns:
            table[name] = col
        return table.tobytes()

    def export(self, path: str) -> None:
        """Write a binary PLY file (in the machine's byte order)."""
        self.sanity_check()
        self.print_header(path, "binary_" + sys.byteorder + "_endian")
        vertices = self._rows([(f"v{j}", c) for j, c in enumerate(self.vertex_data)], self.num_vertices)
        corners = self._corners()
        faces = [("n", np.full(self.num_faces, corners, dtype=np.uint8))]
        faces += [(f"i{j}", self.face_indices[:, j]) for j in range(corners)]
        faces += [(f"f{j}", c) for j, c in enumerate(self.face_data)]
        with open(path, "ab") as f:
            f.write(vertices)
            if self.num_faces:
                f.write(self._rows(faces, self.num_faces))

    def export_ascii(self, path: str) -> None:
        """Write an ASCII PLY file: each value as numpy prints it, a space after each."""
        self.sanity_check()
        self.print_header(path, "ascii")
        out = []
        for i in range(self.num_vertices):
            out.append("".join(str(c[i]) + " " for c in self.vertex_data) + "\n")
        corners = self._corners()
        for i in range(self.num_faces):
            head = f"{corners} " + " ".join(map(str, self.face_indices[i, :])) + " "
            out.append(head + "".join(str(c[i]) + " " for c in self.face_data) + "\n")
        with open(path, "a") as f:
            f.write("".join(out))

    @staticmethod
    def _frame_path(series_num: int, path: str) -> str:
        return f"{path.removesuffix('.ply')}_{series_num:0=6d}.ply"

    def export_frame_ascii(self, series_num: int, path: str) -> None:
        """`export_ascii` to `path` (less a `.ply` ending) + `_000042.ply` for frame 42."""
        self.export_ascii(self._frame_path(series_num, path))

    def export_frame(self, series_num: int, path: str) -> None:
        """`export` to `path` (less a `.ply` ending) + `_000042.ply` for frame 42."""
        self.export(self._frame_path(series_num, path))


__all__ = ["PLYWriter"]
