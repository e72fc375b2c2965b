"""A tiny Debian package built in a test's temporary folder, for fetch_alert_recordings.py to extract offline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def build_deb(tmp_path: Path, package: str, version: str, files: dict[str, bytes], what: str) -> Path:
    """A folder holding one .deb of `package` `version` (Architecture: all) that ships `files` (path inside the
    package -> bytes); skips the test where dpkg-deb is missing."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("needs dpkg-deb")
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: all\nMaintainer: Test <test@example.org>\n"
        f"Description: {what} for a test\n")
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    folder = tmp_path / "debs"
    folder.mkdir()
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(folder / "fake.deb")],
                   check=True, capture_output=True)
    return folder
