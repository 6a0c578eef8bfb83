"""A real small disk for the disk-full tests: a tmpfs mounted (and unmounted) by the test, and a
filler that takes its every free byte. Root only; CI runs as root, so there a missing right fails."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(where: Path, size: str = "2m") -> Iterator[Path]:
    """A real tmpfs of `size` at `where` (root only: CI runs as root)."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("the disk-full tests need root to mount a tmpfs, and CI runs as root")
        pytest.skip("needs root to mount a small tmpfs")
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path) -> Path:
    """Take every free byte of `disk` with a filler file; returns it (delete it to free space)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 64, 1):
            while True:
                try:
                    if os.write(fd, b"\0" * size) < size:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


@contextlib.contextmanager
def read_only(disk: Path) -> Iterator[Path]:
    """`disk` (a small_disk) remounted read-only for the block, then read-write again: what the
    kernel does to a failing SD card, and what root itself cannot write through."""
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
