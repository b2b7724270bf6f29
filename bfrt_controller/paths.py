# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Every path tofcc looks at, creates or replaces goes through here.

Two promises, kept in one place:

* An OS error on a path (a name longer than the file system allows, a
  directory the user may not search, a file where a directory should be,
  a symlink loop) is a PathError: exit 2 and one line naming the path,
  never a traceback. pathlib's `exists()` and `is_file()` raise on all of
  those but "no such file", which is how they escaped before.
* A file tofcc creates never lands on something another user planted. Lock
  and state files live in a directory only we (or root) can write, checked
  on the open descriptor and made 0700 when missing; every file is created
  relative to that descriptor with O_NOFOLLOW, a new file only through
  O_EXCL (a temporary beside it, synced and renamed over the name), and
  nothing is opened with O_TRUNC. A symlink at a name is then replaced or
  refused, and its target is never written.

Files are read through hw_profiles.safe_yaml.load_file, which already turns
each of these errors into one naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import os
import pwd
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from .errors import ConfigError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

StrPath = str | os.PathLike[str]


class PathError(ConfigError):
    """A path tofcc could not use: exit 2, the message names it.

    `unsafe`: the path exists but another user could have put it there (a
    symlink, a directory others can write); a caller that falls back to
    another place when one is missing must stop on this instead."""

    def __init__(self, path: StrPath, reason: str, unsafe: bool = False) -> None:
        shown = os.fspath(path).replace("\0", "\\0")
        super().__init__(shown, reason)
        self.path = shown
        self.unsafe = unsafe

    def __str__(self) -> str:
        # "/tmp is writable by every user", "x.yaml: File name too long"
        glue = " " if self.reason.startswith("is ") else ": "
        return f"{self.path}{glue}{self.reason}"


def error(path: StrPath, exc: OSError | ValueError, nofollow: bool = False) -> PathError:
    """`exc`, raised on `path`, in the user's terms."""
    if isinstance(exc, ValueError):  # os.* refuse an embedded NUL byte this way
        return PathError(path, "not a valid path (NUL byte)")
    if exc.errno == errno.ENOTDIR:
        blocker = _file_in_the_way(Path(path))
        if blocker is not None:
            return PathError(blocker, "is a file, not a directory")
    if exc.errno == errno.ELOOP and nofollow:
        return PathError(path, "is a symbolic link; tofcc does not follow one here", unsafe=True)
    return PathError(path, exc.strerror or str(exc))


def _file_in_the_way(path: Path) -> Path | None:
    """The first component of `path` that exists and is not a directory."""
    for part in (*reversed(path.parents), path):
        try:
            if not stat.S_ISDIR(os.stat(part).st_mode):
                return part
        except (OSError, ValueError):
            return None
    return None


def _stat(path: StrPath, follow: bool) -> os.stat_result | None:
    """The path's stat, None when nothing is there; any other error names it."""
    try:
        return os.stat(path, follow_symlinks=follow)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise error(path, exc) from None


def lexists(path: StrPath) -> bool:
    """Anything at `path`, a dangling symlink included."""
    return _stat(path, follow=False) is not None


def exists(path: StrPath) -> bool:
    return _stat(path, follow=True) is not None


def is_file(path: StrPath) -> bool:
    st = _stat(path, follow=True)
    return st is not None and stat.S_ISREG(st.st_mode)


def is_dir(path: StrPath) -> bool:
    st = _stat(path, follow=True)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _own_private_group(gid: int) -> bool:
    """A user-private group (Debian and Fedora give each user one and a
    umask of 002): group-writable then means writable by us alone."""
    try:
        me = pwd.getpwuid(os.geteuid()).pw_name
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return gid == os.getegid() and group.gr_name == me and set(group.gr_mem) <= {me}


def _untrusted(st: os.stat_result) -> str | None:
    """Why another user could create or replace files in this directory."""
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return f"is owned by uid {st.st_uid}, not by this user (uid {me})"
    if st.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if st.st_mode & stat.S_IWGRP and not _own_private_group(st.st_gid):
        return f"is writable by group {st.st_gid}"
    return None


def _make_dirs(path: Path) -> None:
    """mkdir -p, each directory made 0700 (XDG's mode for state and runtime
    directories); an existing one is left as it is."""
    missing: list[Path] = []
    probe = path
    while not lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:  # made meanwhile: checked on its descriptor below
            pass
        except OSError as exc:
            raise error(d, exc) from None


@contextlib.contextmanager
def private_dir(path: Path) -> Iterator[int]:
    """An open descriptor of directory `path` once it is checked to be one
    no other user can write in (made, 0700, when missing)."""
    _make_dirs(path)
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except (OSError, ValueError) as exc:
        raise error(path, exc) from None
    try:
        problem = _untrusted(os.fstat(fd))
        if problem is not None:
            raise PathError(
                path, f"{problem}: another user could replace tofcc's files in it", unsafe=True
            )
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _any_dir(path: Path) -> Iterator[int]:
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except (OSError, ValueError) as exc:
        raise error(path, exc) from None
    try:
        yield fd
    finally:
        os.close(fd)


def open_lock(dir_fd: int, path: Path) -> int:
    """Open the lock file `path` (in directory `dir_fd`), made 0600 when
    missing: never through a symlink, never truncated, a regular file only.
    The caller owns the descriptor."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(path.name, flags, 0o600, dir_fd=dir_fd)
    except (OSError, ValueError) as exc:
        raise error(path, exc, nofollow=True) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathError(path, "is not a regular file", unsafe=True)
    return fd


def append_line(path: Path, data: bytes) -> None:
    """Append `data` to the log file `path` (made 0600 when missing) in one
    write(2) on an O_APPEND descriptor, synced: lines from several processes
    never interleave. Never through a symlink, a regular file only, in a
    directory no other user can write (made 0700 when missing)."""
    with private_dir(path.parent) as dir_fd:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _CLOEXEC
        try:
            fd = os.open(path.name, flags, 0o600, dir_fd=dir_fd)
        except (OSError, ValueError) as exc:
            raise error(path, exc, nofollow=True) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathError(path, "is not a regular file", unsafe=True)
            if data:
                os.write(fd, data)
                os.fsync(fd)
        except OSError as exc:
            raise error(path, exc) from None
        finally:
            os.close(fd)


def replace_file(path: Path, data: bytes, mode: int = 0o644, private: bool = False) -> None:
    """Write `data` to `path` in one step: a temporary beside it, new
    (O_EXCL, O_NOFOLLOW) and synced, renamed over the name. A reader sees
    the old file or the new one; a symlink at `path` is replaced, its
    target untouched. `private`: the directory must be one no other user
    can write (made 0700 when missing)."""
    parent = path.parent
    with private_dir(parent) if private else _any_dir(parent) as dir_fd:
        # The name shortened: a long but valid name must not fail for its temporary.
        tmp = f".{path.name[:64]}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        try:
            fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
        except (OSError, ValueError) as exc:
            raise error(path, exc) from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise error(path, exc) from None
        with contextlib.suppress(OSError):  # make the rename itself durable
            os.fsync(dir_fd)


def make_dir(path: Path) -> None:
    """mkdir -p for an output directory (reports): errors name the path."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # exist_ok covers a directory only
        raise PathError(path, "is a file, not a directory") from None
    except (OSError, ValueError) as exc:
        raise error(path, exc) from None
