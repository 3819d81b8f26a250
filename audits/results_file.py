"""The resumable results file of an audit: locked, append-only, checksummed, never clobbering.

Format (JSON lines, UTF-8)::

    {"format": "dpcore-audit-results", "version": 2, "config": {...}, "sha256": H(config)}
    {"batch": i, "trials": n, "data": {"scores0": "<base64 float64 LE>", ...}, "sha256": "..."}
    ...

Guarantees
----------
* **Never clobbers.** A path that exists must be an empty regular file or a results file of the
  *same* audit configuration (same header); anything else (``/etc/passwd``, a directory, a device,
  a dangling symbolic link, a results file of another audit) is refused with :class:`ResultsFileError` before a byte is
  written. The one exception is a file whose whole content is a strict prefix of the very header
  this audit would write (a crash while writing it), which is completed.
* **Whole lines only.** Every batch is one ``os.write`` of one line on an ``O_APPEND`` descriptor
  followed by ``os.fsync``; a line is complete only once its final newline is on disk. A kill
  (SIGKILL, SIGTERM, power loss) can leave at most one trailing line without its newline, which
  the next run cuts off (under the lock) and recomputes: nothing is lost beyond the batches in
  flight, nothing is counted twice.
* **Checksummed.** Each batch line carries the SHA-256 of (configuration digest, index, size,
  field names, raw bytes). A line whose checksum does not match, a batch index that appears twice,
  is out of range or holds the wrong number of trials is refused with a line-numbered error. The
  checksum detects editing and corruption; it is not a signature (whoever can write the file can
  recompute it).
* **One writer.** The file is locked with ``fcntl.flock(LOCK_EX | LOCK_NB)`` for the whole audit; a
  second audit on the same file is refused at once (it does not wait). The lock dies with the
  process, so a killed audit never leaves a stale lock. (No lock where ``fcntl`` is unavailable.)
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import stat
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None

__all__ = ["ResultsFile", "ResultsFileError", "FORMAT", "VERSION", "results_fields"]

FORMAT = "dpcore-audit-results"
VERSION = 2
#: Bytes of an existing file read to decide whether it is a results file at all (its header line).
_HEADER_PEEK = 1 << 16
#: Times the path is looked at again when it appears or disappears between the look and the open.
_OPEN_ATTEMPTS = 3
#: On-disk dtype of each batch field.
_DTYPES = {"scores0": "<f8", "scores1": "<f8", "scores": "<f8", "included": "|u1"}


class ResultsFileError(ValueError):
    """A results path that cannot be used (refused, unwritable, locked, tampered); one line."""


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _header_line(config: Dict[str, Any]) -> bytes:
    digest = hashlib.sha256(_canonical(config)).hexdigest()
    return _canonical({"format": FORMAT, "version": VERSION, "config": config, "sha256": digest}) + b"\n"


def _batch_checksum(config_digest: str, index: int, n: int, raw: Sequence[Tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    h.update(config_digest.encode())
    h.update(_canonical([index, n, [k for k, _ in raw]]))
    for _, b in raw:
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


class ResultsFile:
    """Locked, append-only store of the finished batches of one audit configuration.

    Parameters
    ----------
    path : path-like
        Where the results live. Its directory must exist.
    config : dict
        JSON-serialisable audit configuration (target, claim, design, trials, batch size, seed);
        the file is reused only by an audit with an equal configuration.
    sizes : sequence of int
        Trials of each batch (batch ``i`` must hold ``sizes[i]``).
    fields : sequence of str
        Names of the arrays of each batch (keys of :data:`_DTYPES`).

    Attributes
    ----------
    batches : dict of int to dict of ndarray
        Batches already on disk, by index.

    Raises
    ------
    ResultsFileError
        For every refusal, with one line naming ``results_path`` and the reason.
    """

    def __init__(self, path: "str | os.PathLike[str]", config: Dict[str, Any], sizes: Sequence[int],
                 fields: Sequence[str]):
        self.path = os.fspath(path)
        self.sizes = list(sizes)
        self.fields = tuple(fields)
        self.header = _header_line(config)
        self.digest = json.loads(self.header)["sha256"]
        self.batches: Dict[int, Dict[str, np.ndarray]] = {}
        self._fd: Optional[int] = None
        self._fd = self._open()
        try:
            self._lock()
            self._load()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ opening, refusing
    def _fail(self, reason: str) -> ResultsFileError:
        return ResultsFileError(f"results_path {self.path!r} {reason}")

    def _open(self) -> int:
        parent = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(parent):
            raise self._fail(f"cannot be created: directory {parent!r} does not exist")
        for _ in range(_OPEN_ATTEMPTS):
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                raise self._fail(f"cannot be used: {exc.strerror}") from None
            if st is None and os.path.islink(self.path):
                raise self._fail(f"is a symbolic link to {os.readlink(self.path)!r}, which does not exist; give the "
                                 "path of a results file (or create the link's target)")
            if st is not None:
                if stat.S_ISDIR(st.st_mode):
                    raise self._fail("is a directory; give the path of a results file")
                if not stat.S_ISREG(st.st_mode):
                    raise self._fail("exists and is not a regular file; refusing to write into it")
                self._check_is_ours(self._peek())
                flags = os.O_RDWR | os.O_APPEND
            else:
                flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL
            try:
                return os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
            except FileExistsError:  # created by someone else since the stat: look again
                continue
            except FileNotFoundError:  # removed by someone else since the stat: look again
                continue
            except OSError as exc:
                raise self._fail(f"cannot be opened for writing: {exc.strerror}") from None
        raise self._fail(f"keeps changing while it is opened ({_OPEN_ATTEMPTS} attempts); is another program "
                         "creating and deleting it?")

    def _peek(self) -> bytes:
        try:
            with open(self.path, "rb") as fh:
                return fh.read(_HEADER_PEEK)
        except OSError as exc:
            raise self._fail(f"cannot be read: {exc.strerror}") from None

    def _check_is_ours(self, head: bytes) -> None:
        """Refuse unless ``head`` (the file's first bytes) starts a results file of this audit."""
        if not head or self.header.startswith(head):
            return  # empty, or an interrupted write of this very header
        first = head.split(b"\n", 1)[0]
        try:
            rec = json.loads(first)
        except ValueError:
            rec = None
        if not isinstance(rec, dict) or rec.get("format") != FORMAT:
            raise self._fail("exists and is not a dpcore audit results file; refusing to write into it "
                             "(choose a new path)")
        if rec.get("version") != VERSION:
            raise self._fail(f"is a results file of format version {rec.get('version')!r}, not {VERSION}; "
                             "choose a new path")
        if first + b"\n" != self.header:
            theirs = rec.get("config") if isinstance(rec.get("config"), dict) else {}
            ours = json.loads(self.header)["config"]
            diff = ", ".join(f"{k}={theirs.get(k)!r} (this audit: {ours.get(k)!r})"
                             for k in sorted(set(ours) | set(theirs)) if theirs.get(k) != ours.get(k))
            raise self._fail(f"holds a different audit ({diff or 'header checksum differs'}); refusing to write "
                             "into it (choose a new path or delete it)")

    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise self._fail("is in use by another running audit (locked); wait for it to finish or "
                                 "choose another path") from None
            raise self._fail(f"cannot be locked: {exc.strerror}") from None

    # ------------------------------------------------------------------ reading
    def _load(self) -> None:
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        content = b"".join(chunks)
        self._check_is_ours(content[:_HEADER_PEEK])  # again, now under the lock
        if not content.startswith(self.header):  # empty or a partial header: (re)write it
            os.ftruncate(self._fd, 0)
            self._append(self.header)
            return
        end = content.rfind(b"\n") + 1
        if end < len(content):  # an interrupted last line: drop it, its batch is recomputed
            os.ftruncate(self._fd, end)
            os.fsync(self._fd)
        lines = content[len(self.header):end].split(b"\n")[:-1]
        for number, line in enumerate(lines, start=2):
            index, data = self._parse(number, line)
            if index in self.batches:
                raise self._fail(f"line {number}: batch {index} appears twice (duplicated or edited); refusing to "
                                 "use it")
            self.batches[index] = data

    def _parse(self, number: int, line: bytes) -> Tuple[int, Dict[str, np.ndarray]]:
        where = f"line {number}"
        try:
            rec = json.loads(line)
            index, n, enc = rec["batch"], rec["trials"], rec["data"]
            if not (isinstance(index, int) and isinstance(n, int) and isinstance(enc, dict)):
                raise TypeError
            raw = [(k, base64.b64decode(enc[k], validate=True)) for k in self.fields]
            checksum = rec["sha256"]
        except (ValueError, KeyError, TypeError):
            raise self._fail(f"{where}: not a valid batch record (edited or corrupted); refusing to use it") from None
        if set(enc) != set(self.fields):
            raise self._fail(f"{where}: batch fields {sorted(enc)} differ from {sorted(self.fields)}")
        if checksum != _batch_checksum(self.digest, index, n, raw):
            raise self._fail(f"{where}: batch checksum mismatch (edited or corrupted); refusing to use it")
        if not 0 <= index < len(self.sizes):
            raise self._fail(f"{where}: batch index {index} is out of range [0, {len(self.sizes)})")
        data = {k: np.frombuffer(b, dtype=_DTYPES[k]) for k, b in raw}
        if n != self.sizes[index] or any(v.size != n for v in data.values()):
            raise self._fail(f"{where}: batch {index} holds {n} trials; expected {self.sizes[index]}")
        data = {k: (v.astype(bool) if k == "included" else v.astype(np.float64)) for k, v in data.items()}
        return index, data

    # ------------------------------------------------------------------ writing
    def _append(self, line: bytes) -> None:
        """Write ``line`` (ending in a newline) with O_APPEND, then fsync; retries short writes."""
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)

    def add(self, index: int, data: Dict[str, np.ndarray]) -> None:
        """Append batch ``index`` as one checksummed line (durable when this returns)."""
        raw = [(k, np.ascontiguousarray(data[k], dtype=_DTYPES[k]).tobytes()) for k in self.fields]
        n = int(np.asarray(data[self.fields[0]]).size)
        rec = {
            "batch": int(index),
            "trials": n,
            "data": {k: base64.b64encode(b).decode("ascii") for k, b in raw},
            "sha256": _batch_checksum(self.digest, int(index), n, raw),
        }
        self._append(_canonical(rec) + b"\n")
        self.batches[int(index)] = data

    def close(self) -> None:
        """Release the lock and close the file (idempotent)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> "ResultsFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def results_fields(one_run: bool) -> List[str]:
    """Names of the arrays of one batch for a one-run or a two-sample audit."""
    return ["included", "scores"] if one_run else ["scores0", "scores1"]
