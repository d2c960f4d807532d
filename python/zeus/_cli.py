"""The ``zeus`` console script of the wheel: runs the packaged ``zeus`` command-line tool.

The wheel carries the C++ command-line tool as ``zeus/bin/zeus``; the console script ``zeus`` that pip installs
(``project.scripts`` in pyproject.toml) replaces its own process with it, with the same arguments, so that the exit
status, signals, standard streams and the terminal are the tool's own. ``binary_path()`` tells which file runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

_PACKAGE_DIR = Path(__file__).resolve().parent
_ELF_MAGIC = b"\x7fELF"


def _is_elf_executable(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return False
    return magic == _ELF_MAGIC and os.access(path, os.X_OK)


def _candidates() -> List[Path]:
    """Where the ``zeus`` tool may be, in order: the wheel's copy, a CMake build tree's, a system install's."""
    return [
        _PACKAGE_DIR / "bin" / "zeus",  # the wheel
        _PACKAGE_DIR.parent.parent / "bin" / "zeus",  # a build tree: <build>/python/zeus -> <build>/bin/zeus
        Path("/usr/bin/zeus"),  # the Debian package (only an ELF file: never this script itself)
    ]


def binary_path() -> Optional[Path]:
    """The ``zeus`` executable this package runs, or None when there is none."""
    for candidate in _candidates():
        if _is_elf_executable(candidate):
            return candidate
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """Execs the ``zeus`` tool with ``argv`` (default: this process's arguments); returns only on failure."""
    args = sys.argv[1:] if argv is None else list(argv)
    binary = binary_path()
    if binary is None:
        searched = ", ".join(str(c) for c in _candidates())
        print(f"zeus: the zeus command-line tool is not in this installation (looked for {searched})",
              file=sys.stderr)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(binary, [str(binary), *args])
    except OSError as e:
        print(f"zeus: cannot run {binary}: {e.strerror or e}", file=sys.stderr)
        return 126
    return 0  # not reached: execv does not return on success


if __name__ == "__main__":
    sys.exit(main())
