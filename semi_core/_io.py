r"""Files in and out: outputs written atomically and never through a link; untrusted inputs
parsed without unpickling, in bounded memory.

Outputs
-------
Every file the toolkit writes at a path a user named goes through :func:`atomic_write_bytes` /
:func:`atomic_write_text` (or :func:`atomic_output` for writers that want a file object), and
every output directory through :func:`atomic_output_dir`:

* the bytes go to a *new* file with a random name in the destination's directory, created with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` (so it cannot be a link or a file someone planted), and
  are renamed over the destination with :func:`os.replace` at the end. A rename replaces a
  link planted at the destination instead of following it, so no write ever goes through a link
  to a file the toolkit did not create;
* a run killed before the end leaves the old file (or no file) in place, never a truncated one.
  A killed directory build leaves at most a hidden ``.NAME.partial-*`` directory beside (or
  inside) the destination; files named in ``last`` (``report.md``) are moved in last, so a
  directory holding them is complete.

The up-front checks of output paths live in
:func:`semi_core._validation.check_output_path`; they use :func:`probe_writable_dir` and never
open the destination itself.

Inputs
------
:func:`read_scores_csv` parses a ``score,member`` CSV with NumPy in chunks of
:data:`CSV_CHUNK_BYTES` (memory: the two output arrays plus one chunk, not Python lists).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import threading
import tokenize
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "create_exclusive",
    "probe_writable_dir",
    "refuse_link_or_special",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_output",
    "atomic_output_dir",
    "read_scores_csv",
    "read_scores_file",
    "labels_to_bool",
    "read_score_columns",
    "read_score_list",
    "strip_padding",
    "MISSING_CELLS",
    "SCORE_SUFFIXES",
    "MAX_CSV_BYTES",
    "CSV_CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "MEMBER_TRUE",
    "MEMBER_FALSE",
]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


# --------------------------------------------------------------------------- outputs
def create_exclusive(directory, prefix: str, suffix: str = "", *,
                     mode: int = 0o666) -> tuple[int, Path]:
    """Create a new, empty file with a random name in ``directory``; return ``(fd, path)``.

    The file is opened with ``O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW``: it is a file this
    call created (never an existing file, never through a link). ``mode`` is filtered by the
    umask, as for :func:`open`.

    Parameters
    ----------
    directory : path-like
        Where to create it (links among the *ancestors* are followed: the user chose them).
    prefix, suffix : str
        Around 16 random hex digits.
    mode : int
        Permission bits before the umask.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
    for _ in range(64):
        path = Path(directory) / f"{prefix}{secrets.token_hex(8)}{suffix}"
        try:
            return os.open(path, flags, mode), path
        except FileExistsError:  # pragma: no cover - 64-bit random names
            continue
    raise FileExistsError(f"could not create a new file in {directory}")  # pragma: no cover


def probe_writable_dir(directory) -> None:
    """Raise ``OSError`` unless a new file can be created in ``directory`` (then removed).

    A real probe (permission bits are not enough: root, read-only mounts, ACLs), with a random
    name created exclusively (:func:`create_exclusive`), so a link planted in the directory is
    never opened.
    """
    fd, path = create_exclusive(directory, ".semi_core-probe-", mode=0o600)
    os.close(fd)
    os.unlink(path)


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return word
    return "not a regular file"


def refuse_link_or_special(path, name: str) -> os.stat_result | None:
    """``lstat`` an output file path: ``None`` if absent, its stat if a regular file.

    A symbolic link (dangling or not) is refused with ``FileExistsError``, a directory with
    ``IsADirectoryError`` and a FIFO, socket or device with ``FileExistsError``, each naming
    the argument. Nothing is opened (a FIFO would block).
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st.st_mode):
        return st
    what = _kind(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{name}: {path} is a directory, expected a file path")
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:  # pragma: no cover - raced away
            target = "?"
        raise FileExistsError(f"{name}: {path} is a symbolic link (to {target}); outputs are "
                              "never written through a link: remove it or name the target "
                              "itself")
    raise FileExistsError(f"{name}: {path} is {what}, not a regular file; outputs must be "
                          "regular files (a FIFO or device is refused, not opened)")


def _file_mode(st: os.stat_result | None) -> int | None:
    return None if st is None else stat.S_IMODE(st.st_mode)


#: Temporary files and private directories not yet published (:func:`discard_unpublished`).
_UNPUBLISHED: set[str] = set()
#: Held while an output is published or the unpublished ones are discarded.
_PUBLISH = threading.Lock()


def discard_unpublished() -> None:
    """Remove every temporary output not yet published, and refuse to publish them later.

    Called by the CLI's SIGTERM watchdog (:class:`semi_core.cli._Signals`) before the process
    exits without unwinding the main thread (whose ``except`` blocks would remove them), so that
    a terminated command leaves no ``.partial-*`` directory or ``.tmp`` file behind.
    """
    with _PUBLISH:
        for tmp in sorted(_UNPUBLISHED):
            if os.path.isdir(tmp) and not os.path.islink(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        _UNPUBLISHED.clear()


@contextlib.contextmanager
def _publishing(tmp) -> Iterator[None]:
    """Publish ``tmp`` inside this block, unless it was discarded (then raise)."""
    with _PUBLISH:
        if os.fspath(tmp) not in _UNPUBLISHED:
            raise InterruptedError(f"{tmp} was discarded before it was published (SIGTERM)")
        yield
        _UNPUBLISHED.discard(os.fspath(tmp))


@contextlib.contextmanager
def atomic_output(path, *, name: str = "output") -> Iterator[io.BufferedWriter]:
    """Write a file atomically: yield a binary file object, rename it over ``path`` at the end.

    The data go to a new file beside ``path`` (:func:`create_exclusive`); on success it is
    flushed, synced and renamed over ``path`` (:func:`os.replace`: a link at ``path`` is
    replaced, not followed). On any exception (also ``KeyboardInterrupt`` or the CLI's SIGTERM)
    the temporary file is removed and ``path`` is left as it was. An existing ``path`` keeps
    its permission bits.

    Parameters
    ----------
    path : path-like
        Destination. A link, directory, FIFO, socket or device there is refused
        (:func:`refuse_link_or_special`).
    name : str
        The argument named in errors (e.g. ``"--errata"``).
    """
    dest = Path(os.fspath(path))
    st = refuse_link_or_special(dest, name)
    parent = dest.parent if str(dest.parent) else Path(".")
    fd, tmp = create_exclusive(parent, f".{dest.name}.", ".tmp")
    _UNPUBLISHED.add(os.fspath(tmp))
    try:
        mode = _file_mode(st)
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with _publishing(tmp):
            os.replace(tmp, dest)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _UNPUBLISHED.discard(os.fspath(tmp))
        raise


def atomic_write_bytes(path, data: bytes, *, name: str = "output") -> Path:
    """Write ``data`` to ``path`` atomically, never through a link (:func:`atomic_output`)."""
    with atomic_output(path, name=name) as fh:
        fh.write(data)
    return Path(os.fspath(path))


def atomic_write_text(path, text: str, *, name: str = "output", encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically, never through a link (:func:`atomic_output`)."""
    return atomic_write_bytes(path, text.encode(encoding), name=name)


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def _merge(src: Path, dest: Path, last: tuple[str, ...]) -> None:
    """Move the entries of ``src`` into the existing directory ``dest``; ``last`` at the end."""
    entries = sorted(os.listdir(src), key=lambda n: (n in last, last.index(n) if n in last
                                                       else 0, n))
    for entry in entries:
        s, d = src / entry, dest / entry
        s_dir = stat.S_ISDIR(os.lstat(s).st_mode)
        try:
            d_mode = os.lstat(d).st_mode
        except FileNotFoundError:
            d_mode = None
        if s_dir and d_mode is not None and stat.S_ISDIR(d_mode):
            _merge(s, d, ())
            os.rmdir(s)
        elif s_dir and d_mode is not None:
            raise FileExistsError(f"{d} exists and is not a directory; cannot put the "
                                  f"directory {entry} there")
        elif not s_dir and d_mode is not None and stat.S_ISDIR(d_mode):
            raise IsADirectoryError(f"{d} is a directory; cannot put the file {entry} there")
        else:
            os.replace(s, d)  # replaces a link at d, never follows it


@contextlib.contextmanager
def atomic_output_dir(path, *, name: str = "output", last: tuple[str, ...] = ()
                      ) -> Iterator[Path]:
    """Build an output directory privately and publish it at the end.

    Yields a new private directory (``mkdtemp``, mode 0700) to write into. On success:

    * ``path`` absent: the private directory (created beside ``path``, parents created) is
      renamed to ``path`` in one step;
    * ``path`` an existing directory (the private one was created inside it): the files named in
      ``last`` are removed from ``path`` first, every entry is moved in with :func:`os.replace`
      (a link planted at a destination name is replaced, never followed) and the entries of
      ``last`` are moved last, so ``path`` holds them only when it is complete.

    On any exception the private directory is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : path-like
        Destination directory; a link (dangling or not) or a non-directory there is refused.
    name : str
        The argument named in errors (e.g. ``"--out"``).
    last : tuple of str
        Completion markers (e.g. ``("report.json", "report.md")``), moved in last, in order.
    """
    dest = Path(os.fspath(path))
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        if stat.S_ISLNK(st.st_mode):
            raise FileExistsError(f"{name}: {dest} is a symbolic link; output directories are "
                                  "never written through a link: remove it or name the "
                                  "directory itself")
        raise FileExistsError(f"{name}: {dest} exists and is {_kind(st.st_mode)}, not a "
                              "directory")
    inside = st is not None
    if inside:
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=dest))
    else:
        parent = dest.parent if str(dest.parent) else Path(".")
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=parent))
    _UNPUBLISHED.add(os.fspath(tmp))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 -> what mkdir would have given
        with _publishing(tmp):
            if not inside:
                try:
                    os.rename(tmp, dest)  # refuses (ENOTEMPTY/EEXIST) if dest appeared meanwhile
                    return
                except OSError:
                    if not (os.path.isdir(dest) and not os.path.islink(dest)):
                        raise
            for marker in last:  # the old markers go first: a partial merge never looks complete
                with contextlib.suppress(FileNotFoundError):
                    if not stat.S_ISDIR(os.lstat(dest / marker).st_mode):
                        os.unlink(dest / marker)
            _merge(tmp, dest, tuple(last))
            os.rmdir(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _UNPUBLISHED.discard(os.fspath(tmp))
        raise


# --------------------------------------------------------------------------- CSV input
#: Largest CSV read (bytes): ~ 100 million short rows of scores.
MAX_CSV_BYTES = 2 * 2**30
#: Bytes parsed at a time by :func:`read_scores_csv` (the memory of one chunk).
CSV_CHUNK_BYTES = 8 * 2**20
#: Longest data line read (bytes): beyond it the file is refused, not buffered block by block.
MAX_LINE_BYTES = 64 * 2**20
#: Accepted spellings of the ``member`` column (case- and space-insensitive).
MEMBER_TRUE = frozenset({"1", "true", "t", "yes", "y", "member", "in"})
MEMBER_FALSE = frozenset({"0", "false", "f", "no", "n", "nonmember", "non-member", "out"})
#: A decimal spelling of a number in ASCII (``1.0`` as pandas writes it, ``1.000000e+00`` as
#: ``np.savetxt`` does): read as a label when its value is exactly 0 or 1, as numeric arrays are.
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?", re.ASCII)
#: Cells of ``np.loadtxt`` (UCS-4 strings as long as the longest field) may take at most this
#: many times the chunk's bytes; a chunk with a field far longer than the others (a long text
#: column) is parsed row by row instead of allocating rows x columns x longest field.
_FAST_CELL_FACTOR = 32

_TRUE_ARR = np.array(sorted(MEMBER_TRUE))
_FALSE_ARR = np.array(sorted(MEMBER_FALSE))


def _label_word(word: str) -> bool | None:
    """One stripped, lower-case membership label: ``True``/``False``, ``None`` if it is none.

    The spellings of :data:`MEMBER_TRUE` / :data:`MEMBER_FALSE`, or a decimal number equal to
    1 or 0 (``1.0``, ``0.000``, ``1e0``): the values a numeric label array may hold
    (:func:`labels_to_bool`), so a file means the same in every format.
    """
    if word in MEMBER_TRUE:
        return True
    if word in MEMBER_FALSE:
        return False
    if _DECIMAL.fullmatch(word):
        value = float(word)
        if value == 1.0:
            return True
        if value == 0.0:
            return False
    return None


def _label_strings(low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(is_true, ok)`` of stripped, lower-case label strings (:func:`_label_word`).

    The spellings are matched vectorised; every other distinct string is judged once.
    """
    is_true = np.isin(low, _TRUE_ARR)
    ok = is_true | np.isin(low, _FALSE_ARR)
    rest = np.flatnonzero(~ok)
    if rest.size:
        words, inv = np.unique(low[rest], return_inverse=True)
        verdict = [_label_word(str(w)) for w in words]
        is_true[rest] = np.array([v is True for v in verdict], dtype=bool)[inv]
        ok[rest] = np.array([v is not None for v in verdict], dtype=bool)[inv]
    return is_true, ok


def _csv_error(name: str, line: int, exc: csv.Error) -> ValueError:
    """A csv-module error as a user error naming the file's line."""
    if "field limit" in str(exc):
        return ValueError(
            f"{name} line {line}: a field longer than {csv.field_size_limit()} characters "
            "(the limit of Python's csv module); a score file has no such field: check that "
            f"{name} names the right file, or drop the long column")
    return ValueError(f"{name} line {line}: malformed CSV ({exc})")


class _CRLines:
    """A byte stream whose lines end in CR alone (classic Mac OS exports), read with LF ends.

    ``read`` returns the next block with ``\\r\\n`` and ``\\r`` made ``\\n``; a block ending in
    ``\\r`` is extended by single bytes until the next byte decides (a ``\\r\\n`` split between
    two blocks stays one line end). Linear in the bytes read.
    """

    def __init__(self, stream, pending: bytes = b""):
        self._stream = stream
        self._pending = pending

    def read(self, n: int) -> bytes:
        block = self._pending + self._stream.read(n)
        self._pending = b""
        while block.endswith(b"\r"):
            more = self._stream.read(1)
            if not more:
                break
            block += more
        return block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _chunks(stream, first: bytes, name: str) -> Iterator[bytes]:
    """Blocks of whole lines (each ends at a newline, except possibly the last)."""
    total = len(first)
    rest = first
    while True:
        block = stream.read(CSV_CHUNK_BYTES)
        if block:
            total += len(block)
            if total > MAX_CSV_BYTES:
                raise ValueError(f"{name}: input larger than {MAX_CSV_BYTES >> 30} GiB")
            buf = rest + block
            cut = buf.rfind(b"\n")
            if cut < 0:
                if len(buf) > MAX_LINE_BYTES:  # else every block would copy the line again
                    raise ValueError(f"{name}: a line longer than {MAX_LINE_BYTES >> 20} MiB; "
                                     "a score file has no such line")
                rest = buf
                continue
            yield buf[:cut + 1]
            rest = buf[cut + 1:]
        else:
            if rest:
                yield rest
            return


def _decode(chunk: bytes, name: str, offset: int) -> str:
    if b"\x00" in chunk:
        raise ValueError(f"{name}: binary data (NUL bytes) in a CSV file")
    try:
        return chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text ({exc.reason} at byte "
                         f"{offset + exc.start})") from None


def _slow_rows(text: str, ncols: int, i_s: int, i_m: int, line0: int, name: str):
    """Row-by-row parse of one chunk with the csv module: exact messages with line numbers."""
    scores, member = [], []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for i, row in enumerate(reader, start=line0):
            if not row or all(not c.strip() for c in row):
                continue  # blank line
            if len(row) != ncols:
                raise ValueError(f"{name} line {i}: {len(row)} fields, the header has {ncols}")
            raw_s, raw_m = row[i_s], row[i_m]
            try:
                scores.append(float(raw_s))
            except (TypeError, ValueError):
                raise ValueError(f"{name} line {i}: score {raw_s!r} is not a number") from None
            m = _label_word((raw_m or "").strip().lower())
            if m is None:
                raise ValueError(f"{name} line {i}: member must be 1/0 or true/false, got "
                                 f"{raw_m!r}")
            member.append(m)
    except csv.Error as exc:
        raise _csv_error(name, line0 + reader.line_num - 1, exc) from None
    return np.asarray(scores, dtype=float), np.asarray(member, dtype=bool)


def _cell_bytes(chunk: bytes, ncols: int) -> int:
    """Upper bound on the bytes of ``np.loadtxt``'s string cells for ``chunk``: rows x columns
    x longest field (split at commas and newlines) x 4 (UCS-4)."""
    b = np.frombuffer(chunk, dtype=np.uint8)
    ends = np.flatnonzero(b == ord("\n"))
    rows = ends.size + 1
    line = int(np.diff(ends, prepend=-1, append=b.size).max()) - 1
    if rows * ncols * line * 4 <= _FAST_CELL_FACTOR * len(chunk):
        return rows * ncols * line * 4  # no field is longer than its line: cheap and enough
    cuts = np.flatnonzero((b == ord(",")) | (b == ord("\n")))
    longest = int(np.diff(cuts, prepend=-1, append=b.size).max()) - 1  # separators excluded
    return rows * ncols * longest * 4


def _fast_rows(text: str, ncols: int, i_s: int, i_m: int, chunk: bytes | None = None):
    """Vectorised parse of one chunk, or ``None`` when anything needs the exact slow path."""
    if '"' in text:
        return None  # quoting: the csv module's rules
    if chunk is not None and \
            _cell_bytes(chunk, ncols) > _FAST_CELL_FACTOR * len(chunk) + 2**20:
        return None  # one long field would make every cell that long
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "input contained no data"
            cells = np.loadtxt(io.StringIO(text), delimiter=",", dtype=str, comments=None,
                               ndmin=2, quotechar=None)
    except ValueError:  # ragged rows, blank lines with spaces: the slow path decides
        return None
    if cells.size == 0:
        return np.empty(0), np.empty(0, bool)
    if cells.shape[1] != ncols:
        return None
    try:
        scores = cells[:, i_s].astype(float)
    except ValueError:
        return None
    is_true, ok = _label_strings(np.char.lower(np.char.strip(cells[:, i_m])))
    if not ok.all():
        return None
    return scores, is_true


def read_scores_csv(path, *, name: str = "--scores", score_col: str = "score",
                    label_col: str = "member") -> tuple[np.ndarray, np.ndarray]:
    r"""Read ``score,member`` rows; return ``(member scores, non-member scores)``.

    Parameters
    ----------
    path : path-like or ``"-"``
        The CSV file; ``-`` reads standard input.
    name : str
        The argument named in errors.
    score_col, label_col : str
        The two columns read (other columns are ignored).

    Returns
    -------
    member, nonmember : ndarray of float

    Notes
    -----
    The header is matched case- and space-insensitively; a UTF-8 byte-order mark is ignored;
    a repeated column (``member`` twice) is an error, not silently the last one. Labels are one
    of :data:`MEMBER_TRUE` / :data:`MEMBER_FALSE` or a decimal number equal to 1 or 0 (``1.0``
    as pandas writes it), the labels numeric arrays may hold (:func:`labels_to_bool`). Lines
    may end in LF, CRLF or CR alone (read in linear time). The file is parsed in chunks of
    :data:`CSV_CHUNK_BYTES` with NumPy (the csv module only for chunks with quotes, a field
    far longer than the others, or an error, to name the line), so memory is the two result
    arrays (9 bytes a row) plus one chunk.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the line for a
    missing column, a ragged row, an unparsable score (NaN is rejected later) or membership
    value, a field longer than the csv module's limit (131,072 characters), NUL bytes, text
    that is not UTF-8, or more than :data:`MAX_CSV_BYTES`.
    """
    if path is None or not str(path).strip():
        raise ValueError(f"{name} must be a file path or '-' (standard input)")
    if str(path) == "-":
        stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else \
            io.BytesIO(sys.stdin.read(MAX_CSV_BYTES + 1).encode())
        return _read_stream(stream, name, score_col, label_col)
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{name}: no such file {path}")
    if p.stat().st_size > MAX_CSV_BYTES:
        raise ValueError(f"{name}: {path} is larger than {MAX_CSV_BYTES >> 30} GiB")
    with open(p, "rb") as fh:
        return _read_stream(fh, name, score_col, label_col)


def _first_line(stream, name: str) -> tuple[bytes, int]:
    """Read blocks until one holds a line end (each block is searched once: linear); return
    the bytes read and the index of the first line end (-1: none)."""
    parts: list[bytes] = []
    total = 0
    while True:
        block = stream.read(65536)
        if not block:
            break
        parts.append(block)
        total += len(block)
        if total > MAX_CSV_BYTES:
            raise ValueError(f"{name}: input larger than {MAX_CSV_BYTES >> 30} GiB")
        if b"\n" in block or b"\r" in block:
            break
    head = b"".join(parts)
    ends = [i for i in (head.find(b"\n"), head.find(b"\r")) if i >= 0]
    end = min(ends) if ends else -1
    if end == len(head) - 1 and head.endswith(b"\r"):
        head += stream.read(1)  # a CRLF split after the block: the next byte decides
    return head, end


def _open_csv(stream, name: str):
    """Read the header record; return ``(stream, header, header_bytes, rest, offset)``: the
    stream to read the data from (LF line ends), the header's cells, the bytes consumed and
    the data bytes already read."""
    head, end = _first_line(stream, name)
    offset = 0
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]  # a UTF-8 byte-order mark (spreadsheet exports)
        offset, end = 3, end - 3
    # the header is the first csv record (it may be quoted); the data start after its line end
    if end < 0:
        header_bytes, rest = head, b""
    elif head[end:end + 1] == b"\r" and head[end + 1:end + 2] != b"\n":
        # CR-only line ends: every later block is read with LF ends
        header_bytes, rest = head[:end] + b"\n", b""
        stream = _CRLines(stream, head[end + 1:])
    else:
        cut = head.find(b"\n", end)
        header_bytes, rest = head[:cut + 1], head[cut + 1:]
    header_text = _decode(header_bytes, name, offset)
    try:
        header = next(csv.reader(io.StringIO(header_text, newline="")), None)
    except csv.Error as exc:
        raise _csv_error(name, 1, exc) from None
    return stream, header, header_bytes, rest, offset


def _read_stream(stream, name: str, score_col: str = "score", label_col: str = "member"
                 ) -> tuple[np.ndarray, np.ndarray]:
    stream, header, header_bytes, rest, offset = _open_csv(stream, name)
    cols = [c.strip().lower() for c in (header or [])]
    want = (str(score_col).strip().lower(), str(label_col).strip().lower())
    if want[0] == want[1]:
        raise ValueError(f"the score and label columns must differ, both are {score_col!r}")
    if want[0] not in cols or want[1] not in cols:
        raise ValueError(f"{name}: CSV header must contain columns {want[0]!r} (scores) and "
                         f"{want[1]!r} (membership labels), got {header}")
    for col in want:
        if cols.count(col) > 1:
            raise ValueError(f"{name}: column {col!r} appears {cols.count(col)} times in "
                             f"the header {header}")
    ncols, i_s, i_m = len(cols), cols.index(want[0]), cols.index(want[1])
    mem_parts, non_parts = [], []
    line = 2
    offset += len(header_bytes)
    for chunk in _chunks(stream, rest, name):
        text = _decode(chunk, name, offset)
        offset += len(chunk)
        got = _fast_rows(text, ncols, i_s, i_m, chunk)
        if got is None:
            got = _slow_rows(text, ncols, i_s, i_m, line, name)
        scores, member = got
        line += text.count("\n")
        mem_parts.append(scores[member])
        non_parts.append(scores[~member])
        del scores, member, got, text
    mem = np.concatenate(mem_parts) if mem_parts else np.empty(0)
    mem_parts.clear()
    non = np.concatenate(non_parts) if non_parts else np.empty(0)
    return mem, non


# --------------------------------------------------------------------------- array inputs
#: File types of :func:`read_scores_file` (anything else is read as CSV).
SCORE_SUFFIXES = (".csv", ".npy", ".npz", ".parquet", ".pq")


def labels_to_bool(values, name: str) -> np.ndarray:
    """Membership labels as ``bool``: the one label validator of every score format.

    Parameters
    ----------
    values : array_like, 1-D
        Booleans, numbers equal to 0 or 1 (``1.0`` included), or strings: the spellings of
        :data:`MEMBER_TRUE` / :data:`MEMBER_FALSE` or a decimal number equal to 0 or 1
        (``"1.0"``, as a CSV written by pandas holds). The CSV reader applies the same rule
        cell by cell.
    name : str
        Named in the error.

    Returns
    -------
    ndarray of bool

    Anything else (``2``, ``0.5``, NaN, ``"maybe"``) is refused with a ``ValueError`` naming
    ``name`` and the first offending values; a dtype that cannot hold labels with a
    ``TypeError``.
    """
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.dtype == bool:
        return a
    if a.dtype.kind in "iuf":
        ok = (a == 0) | (a == 1)
        if not ok.all():
            bad = a[~ok][:3].tolist()
            raise ValueError(f"{name} must hold 0/1 (or true/false), got {bad}")
        return a == 1
    if a.dtype.kind in "USO":
        is_true, ok = _label_strings(np.char.lower(np.char.strip(a.astype(str))))
        if not ok.all():
            raise ValueError(f"{name} must be 1/0 or true/false, got {a[~ok][:3].tolist()}")
        return is_true
    raise TypeError(f"{name} has dtype {a.dtype}, not membership labels")


def _split(scores, labels, name: str, score_col: str, label_col: str):
    sc = np.asarray(scores)
    if sc.ndim != 1 or sc.dtype.kind not in "iuf":
        raise ValueError(f"{name}: column {score_col!r} must be a 1-D array of real numbers, got "
                         f"shape {sc.shape} dtype {sc.dtype}")
    lab = labels_to_bool(labels, f"{name}: column {label_col!r}")
    if lab.shape != sc.shape:
        raise ValueError(f"{name}: {sc.size} scores but {lab.size} labels")
    sc = sc.astype(float)
    return sc[lab], sc[~lab]


#: What a damaged ``.npy``/``.npz`` raises while it is read: zipfile (``BadZipFile``: no central
#: directory, a bad CRC), zlib (a cut deflate stream), NumPy's header parser (``ValueError``,
#: and ``SyntaxError`` / ``tokenize.TokenError`` from the literal parser on garbage bytes).
_BROKEN = (OSError, EOFError, ValueError, SyntaxError, tokenize.TokenError,
           zipfile.BadZipFile, zlib.error)


def read_scores_file(path, *, name: str = "--scores", score_col: str = "score",
                     label_col: str = "member") -> tuple[np.ndarray, np.ndarray]:
    r"""Scores and membership labels from a file; ``(member scores, non-member scores)``.

    By suffix: ``.npz`` (arrays named ``score_col`` and ``label_col``), ``.npy`` (a
    structured array with those fields, or a plain ``(n, 2)`` array of ``[score, label]``
    rows), ``.parquet``/``.pq`` (those columns; needs pandas with pyarrow), anything else
    (``-`` included) a CSV with a header (:func:`read_scores_csv`). Files are read with
    ``allow_pickle=False``. Labels: :func:`labels_to_bool`.
    """
    if path is None or not str(path).strip():
        raise ValueError(f"{name} must be a file path or '-' (standard input)")
    suffix = Path(str(path)).suffix.lower()
    if str(path) == "-" or suffix not in (".npy", ".npz", ".parquet", ".pq"):
        return read_scores_csv(path, name=name, score_col=score_col, label_col=label_col)
    p, suffix = _check_suffix_file(path, name)
    cols = [score_col, label_col]
    if suffix == ".npz":
        (sc, lab), _ = _npz_arrays(p, cols, name,
                                   hint="; name them with --score-col / --label-col")
        return _split(sc, lab, name, score_col, label_col)
    if suffix == ".npy":
        a = _load_npy(p, name)
        if a.dtype.names:
            missing = [c for c in cols if c not in a.dtype.names]
            if missing:
                raise ValueError(f"{name}: {path} has no field {missing[0]!r} (fields: "
                                 f"{list(a.dtype.names)})")
            return _split(a[score_col], a[label_col], name, score_col, label_col)
        if a.ndim != 2 or a.shape[1] != 2:
            raise ValueError(f"{name}: a plain .npy must have shape (n, 2) with rows [score, "
                             f"label], got {a.shape}")
        return _split(a[:, 0], a[:, 1], name, "column 0", "column 1")
    frame = _parquet_frame(p, cols, name)
    scores = frame[score_col]
    labels = frame[label_col]
    if scores.isna().any() or labels.isna().any():
        raise ValueError(f"{name}: {path} has missing values in {score_col!r} or {label_col!r}")
    return _split(scores.to_numpy(), labels.to_numpy(), name, score_col, label_col)


# --------------------------------------------------------------------------- score columns
#: Cells of a padded column read as missing (case-insensitive): empty (pandas' ``to_csv``) and
#: ``nan`` (``np.savetxt``). Accepted only as padding after a column's last value.
MISSING_CELLS = frozenset({"", "nan"})


def _cells_to_float(raw: np.ndarray) -> np.ndarray | None:
    """Cells as floats, missing cells NaN; ``None`` if a cell is not a number."""
    low = np.char.lower(np.char.strip(raw))
    missing = np.isin(low, np.array(sorted(MISSING_CELLS)))
    out = np.full(raw.shape, np.nan)
    try:
        out[~missing] = raw[~missing].astype(float)
    except ValueError:
        return None
    return out


def _fast_columns(text: str, ncols: int, idx: list[int], chunk: bytes):
    if '"' in text or _cell_bytes(chunk, ncols) > _FAST_CELL_FACTOR * len(chunk) + 2**20:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            cells = np.loadtxt(io.StringIO(text), delimiter=",", dtype=str, comments=None,
                               ndmin=2, quotechar=None)
    except ValueError:
        return None
    if cells.size == 0:
        return [np.empty(0) for _ in idx]
    if cells.shape[1] != ncols:
        return None
    out = [_cells_to_float(cells[:, j]) for j in idx]
    return None if any(o is None for o in out) else out


def _slow_columns(text: str, ncols: int, idx: list[int], names: list[str], line0: int,
                  name: str) -> list[np.ndarray]:
    out: list[list[float]] = [[] for _ in idx]
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for i, row in enumerate(reader, start=line0):
            if not row or (ncols > 1 and len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if len(row) != ncols:
                raise ValueError(f"{name} line {i}: {len(row)} fields, the header has {ncols}")
            for k, j in enumerate(idx):
                cell = row[j].strip()
                if cell.lower() in MISSING_CELLS:
                    out[k].append(np.nan)
                    continue
                try:
                    out[k].append(float(cell))
                except ValueError:
                    raise ValueError(f"{name} line {i}: {names[k]} {row[j]!r} is not a "
                                     "number") from None
    except csv.Error as exc:
        raise _csv_error(name, line0 + reader.line_num - 1, exc) from None
    return [np.asarray(o, dtype=float) for o in out]


def _csv_columns(stream, columns: list, name: str, *, headerless: bool = False
                 ) -> list[np.ndarray]:
    """Float columns of a CSV by header name (missing cells NaN), parsed in bounded chunks as
    :func:`read_scores_csv`. ``headerless``: a one-column file whose first line is a number
    has no header (``np.savetxt`` output)."""
    stream, header, header_bytes, rest, offset = _open_csv(stream, name)
    cols = [c.strip().lower() for c in (header or [])]
    first: list[np.ndarray] | None = None
    if headerless and len(cols) == 1 and _DECIMAL_OR_SPECIAL.fullmatch(cols[0]):
        first, idx = [np.array([float(cols[0])])], [0]
    else:
        if columns == [None]:  # the file's only column, whatever its name
            if len(cols) != 1:
                raise ValueError(f"{name}: the header {header} has {len(cols)} columns; name "
                                 "the one to read with --score-col")
            want = cols
        else:
            want = [str(c).strip().lower() for c in columns]
        for c in want:
            if c not in cols:
                raise ValueError(f"{name}: CSV header must contain column {c!r}, got {header}")
            if cols.count(c) > 1:
                raise ValueError(f"{name}: column {c!r} appears {cols.count(c)} times in the "
                                 f"header {header}")
        idx = [cols.index(c) for c in want]
    ncols = max(len(cols), 1)
    parts: list[list[np.ndarray]] = [[] if first is None else [first[0]] for _ in idx]
    line = 2
    offset += len(header_bytes)
    for chunk in _chunks(stream, rest, name):
        text = _decode(chunk, name, offset)
        offset += len(chunk)
        got = _fast_columns(text, ncols, idx, chunk)
        if got is None:
            got = _slow_columns(text, ncols, idx, [cols[j] for j in idx], line, name)
        line += text.count("\n")
        for k, g in enumerate(got):
            parts[k].append(g)
    return [np.concatenate(p) if p else np.empty(0) for p in parts]


#: A number as ``np.savetxt`` / ``repr`` write it (a headerless one-column file).
_DECIMAL_OR_SPECIAL = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf|nan)",
                                 re.ASCII)


def strip_padding(values: np.ndarray, name: str) -> tuple[np.ndarray, int]:
    r"""A padded column's values and the number of padding cells after them.

    The values are the cells up to the last non-missing one; every cell after it must be
    missing (NaN: padding of the shorter column when two columns of unequal length share a
    table, as ``pd.DataFrame({"loss_train": a, "loss_test": b})`` writes them). A missing cell
    *before* the last value is refused, naming the row (a NaN score is not padding).

    Parameters
    ----------
    values : ndarray of float
        The column, missing cells NaN.
    name : str
        Named in the error.

    Returns
    -------
    values : ndarray
    n_padding : int
    """
    v = np.asarray(values, dtype=float)
    present = ~np.isnan(v)
    if not present.any():
        raise ValueError(f"{name} has no values (every cell is empty or NaN)")
    last = int(np.flatnonzero(present)[-1])
    inner = np.flatnonzero(~present[:last + 1])
    if inner.size:
        raise ValueError(f"{name}: row {int(inner[0]) + 1} is empty or NaN but values follow; "
                         "only trailing cells (padding of the shorter column) may be missing")
    return v[:last + 1], int(v.size - last - 1)


def _check_suffix_file(path, name: str) -> tuple[Path, str]:
    if path is None or not str(path).strip():
        raise ValueError(f"{name} must be a file path or '-' (standard input)")
    p = Path(str(path))
    if str(path) != "-":
        if not p.is_file():
            raise FileNotFoundError(f"{name}: no such file {path}")
        if p.stat().st_size > MAX_CSV_BYTES:
            raise ValueError(f"{name}: {path} is larger than {MAX_CSV_BYTES >> 30} GiB")
    return p, p.suffix.lower()


def _float_1d(a, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != 1 or a.dtype.kind not in "iuf" or a.dtype == bool:
        raise ValueError(f"{name} must be a 1-D array of real numbers, got shape {a.shape} "
                         f"dtype {a.dtype}")
    return a.astype(float)


def _npz_arrays(p: Path, want: list[str] | None, name: str, *, hint: str = ""
                ) -> tuple[list[np.ndarray], list[str]]:
    """Arrays of an .npz by name (``None``: its only array; ``hint`` ends the error naming a
    missing one); damaged archives refused. The one .npz reader of the score files."""
    got: list[np.ndarray] = []
    try:
        with np.load(p, allow_pickle=False) as z:
            files = list(z.files)
            names = want if want is not None else files
            if want is None and len(files) != 1:
                raise ValueError(f"{name}: {p} holds arrays {files}; name one with --score-col")
            missing = [c for c in names if c not in files]
            if missing:
                raise ValueError(f"{name}: {p} has no array {missing[0]!r} (arrays: {files})"
                                 f"{hint}")
            got = [z[c] for c in names]
    except MemoryError:
        raise
    except ValueError as exc:
        if str(exc).startswith(name):
            raise
        raise ValueError(f"{name}: {p} is not a readable .npz archive ({exc})") from None
    except _BROKEN as exc:
        raise ValueError(f"{name}: {p} is not a readable .npz archive ({type(exc).__name__}: "
                         f"{exc}); is the file complete?") from None
    return got, names


def read_score_columns(path, member_col: str, nonmember_col: str, *, name: str = "--scores"
                       ) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    r"""Member and non-member scores from two columns side by side (``loss_train`` /
    ``loss_test``), the shorter one padded with empty or NaN cells.

    Parameters
    ----------
    path : path-like or ``"-"``
        CSV (header row; ``-`` reads standard input), ``.npz`` (two arrays, lengths may
        differ) or ``.parquet``.
    member_col, nonmember_col : str
        The two columns (arrays).
    name : str
        The argument named in errors.

    Returns
    -------
    member, nonmember : ndarray of float
        Each column up to its last value (:func:`strip_padding`).
    padding : dict
        Column name -> number of trailing empty/NaN cells dropped as padding.

    Notes
    -----
    Missing cells are accepted only as trailing padding; one inside a column is refused. The
    CSV is parsed in bounded chunks like :func:`read_scores_csv`.
    """
    cols = [str(member_col), str(nonmember_col)]
    if cols[0].strip().lower() == cols[1].strip().lower():
        raise ValueError(f"--member-col and --nonmember-col must differ, both are {cols[0]!r}")
    p, suffix = _check_suffix_file(path, name)
    if str(path) != "-" and suffix == ".npz":
        arrays, _ = _npz_arrays(p, cols, name)
        raw = [_float_1d(a, f"{name}: array {c!r}") for a, c in zip(arrays, cols, strict=True)]
    elif str(path) != "-" and suffix in (".parquet", ".pq"):
        raw = _parquet_columns(p, cols, name)
    elif str(path) != "-" and suffix == ".npy":
        raise ValueError(f"{name}: a .npy file holds one array; use --member-scores / "
                         "--nonmember-scores for two files, or an .npz with both arrays")
    elif str(path) == "-":
        raw = _csv_columns(sys.stdin.buffer, cols, name)
    else:
        with open(p, "rb") as fh:
            raw = _csv_columns(fh, cols, name)
    (mem, pad_m), (non, pad_n) = (strip_padding(r, f"{name}: column {c!r}")
                                  for r, c in zip(raw, cols, strict=True))
    return mem, non, {cols[0]: pad_m, cols[1]: pad_n}


def _load_npy(p: Path, name: str) -> np.ndarray:
    """An .npy array without objects (never unpickled); damaged files refused naming ``name``."""
    try:
        return np.load(p, allow_pickle=False)
    except MemoryError:
        raise
    except _BROKEN as exc:
        raise ValueError(f"{name}: {p} is not a readable .npy array without objects "
                         f"({exc})") from None


def _parquet_frame(p: Path, cols: list[str], name: str):
    """Columns ``cols`` of a parquet file as a pandas frame (pandas and pyarrow, optional)."""
    try:
        import pandas as pd  # lazy: optional dependency
        return pd.read_parquet(p, columns=cols)
    except ImportError as exc:
        raise ImportError(f"{name}: reading parquet needs pandas and pyarrow (pip install "
                          f"pandas pyarrow): {exc}") from None
    except (KeyError, ValueError, OSError) as exc:
        raise ValueError(f"{name}: cannot read columns {cols} of {p} "
                         f"({type(exc).__name__}: {exc})") from None


def _parquet_columns(p: Path, cols: list[str], name: str) -> list[np.ndarray]:
    frame = _parquet_frame(p, cols, name)
    return [_float_1d(frame[c].to_numpy(dtype=float, na_value=np.nan), f"{name}: column {c!r}")
            for c in cols]


def read_score_list(path, *, name: str, score_col: str | None = None) -> np.ndarray:
    r"""One class's scores from a file of their own (``--member-scores`` / ``--nonmember-scores``).

    Parameters
    ----------
    path : path-like
        ``.npy`` (a 1-D array), ``.npz`` (the array ``score_col``, or its only array),
        ``.parquet`` (column ``score_col``, or its only column) or text: a CSV with a header
        (column ``score_col``, or its only column) or one number a line without header
        (``np.savetxt``).
    name : str
        The argument named in errors.
    score_col : str, optional
        The column or array to read.

    Returns
    -------
    ndarray of float
        Every value; a missing cell or NaN is refused later (no padding in this form).
    """
    p, suffix = _check_suffix_file(path, name)
    if str(path) == "-":
        raise ValueError(f"{name} must be a file (standard input is read by --scores)")
    if suffix == ".npy":
        a = _load_npy(p, name)
        if a.dtype.names:
            if score_col is None or score_col not in a.dtype.names:
                raise ValueError(f"{name}: {path} is a structured array with fields "
                                 f"{list(a.dtype.names)}; name one with --score-col")
            a = a[score_col]
        return _float_1d(a, f"{name}: {path}")
    if suffix == ".npz":
        arrays, names = _npz_arrays(p, None if score_col is None else [score_col], name)
        return _float_1d(arrays[0], f"{name}: array {names[0]!r}")
    if suffix in (".parquet", ".pq"):
        if score_col is None:
            try:
                import pyarrow.parquet as pq  # lazy: optional dependency
                cols = pq.read_schema(p).names
            except ImportError as exc:
                raise ImportError(f"{name}: reading parquet needs pandas and pyarrow: "
                                  f"{exc}") from None
            if len(cols) != 1:
                raise ValueError(f"{name}: {path} has columns {cols}; name one with "
                                 "--score-col")
            score_col = cols[0]
        return _parquet_columns(p, [score_col], name)[0]
    with open(p, "rb") as fh:
        return _csv_columns(fh, [score_col], name, headerless=True)[0]
