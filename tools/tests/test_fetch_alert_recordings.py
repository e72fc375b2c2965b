"""fetch_alert_recordings.py against a tiny .deb built here: extraction, hash checks, SOURCES rows, splits. Offline."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

import fetch_alert_recordings as fetcher  # noqa: E402
from hearalert_corpus.sources import list_audio, split_of  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")

PACKAGE, VERSION = "hearalert-fake-alerts", "1:0.1-1"  # an epoch, as oxygen-sounds and twinkle-common have
FILES = {  # path inside the .deb -> label; names chosen so that split_of puts them in train, test and val
    "usr/share/sounds/fake/beep beep.wav": "alarm_clock",  # a space, as lomiri's "Alarm clock.ogg" has
    "usr/share/sounds/fake/ring20.wav": "phone_ring",
    "usr/share/sounds/fake/ring27.wav": "phone_ring",
}


def wav_bytes(freq: float) -> bytes:
    t = np.arange(8000) / 16000.0
    buf = io.BytesIO()
    sf.write(buf, (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), 16000, format="WAV", subtype="PCM_16")
    return buf.getvalue()


@pytest.fixture()
def deb(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path / "pkg"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {PACKAGE}\nVersion: {VERSION}\nArchitecture: all\nMaintainer: Test <test@example.org>\n"
        "Description: fake alert sounds for a test\n")
    contents = {path: wav_bytes(1000 + 500 * i) for i, path in enumerate(FILES)}
    for path, data in contents.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    doc = root / "usr/share/doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
                                   "Files: *\nCopyright: 2026 Test\nLicense: CC0-1.0\n")
    debs = tmp_path / "debs"
    debs.mkdir()
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(debs / "fake_any.deb")],
                   check=True, capture_output=True)
    return debs, contents


def write_manifest(path: Path, contents: dict[str, bytes], version: str = VERSION,
                   sha: dict[str, str] | None = None, extra_path: str | None = None) -> Path:
    lines = ["\t".join(fetcher.MANIFEST_COLUMNS)]
    rows = list(contents.items()) + ([(extra_path, b"")] if extra_path else [])
    for inside, data in rows:
        digest = (sha or {}).get(inside, hashlib.sha256(data).hexdigest())
        label = FILES.get(inside, "doorbell")
        lines.append("\t".join([label, PACKAGE, version, inside, "CC0-1.0", digest, "test tone"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp_path: Path, manifest: Path, debs: Path, *extra: str) -> int:
    return fetcher.main(["--out", str(tmp_path / "alerts"), "--manifest", str(manifest), "--debs", str(debs),
                         "--offline", *extra])


def test_extracts_listed_files_and_writes_sources_rows_with_make_corpus_splits(tmp_path, deb, capsys):
    debs, contents = deb
    manifest = write_manifest(tmp_path / "m.tsv", contents)
    sources = tmp_path / "SOURCES.tsv"
    assert run(tmp_path, manifest, debs, "--sources-tsv", str(sources)) == 0
    out = tmp_path / "alerts"
    for inside, label in FILES.items():
        target = out / label / f"{PACKAGE}__{Path(inside).name}"
        assert target.read_bytes() == contents[inside]
    lines = sources.read_text().splitlines()
    assert lines[0] == "source\tversion\tpath_inside\tlicence\tused_for\tsplit"
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == len(FILES)
    assert len({row[-1] for row in rows}) > 1, "the fixture's file names should fall in different splits"
    for source, version, inside, licence, used_for, split in rows:
        label = FILES[inside]
        assert (source, version, licence, used_for) == (PACKAGE, VERSION, "CC0-1.0", f"alert:{label}")
        target = out / label / f"{PACKAGE}__{Path(inside).name}"
        # make_corpus lists OUT/<label> with list_audio, which hashes the path relative to that folder
        assert split == split_of(target.relative_to(out / label).as_posix())
        assert target in list_audio(out / label, split)
    summary = capsys.readouterr().out
    assert "alarm_clock" in summary and "sha256 ok" in summary


def test_wrong_hash_fails_with_one_clear_line_and_writes_nothing(tmp_path, deb, capsys):
    debs, contents = deb
    bad = "0" * 64
    first = next(iter(contents))
    manifest = write_manifest(tmp_path / "m.tsv", {first: contents[first]}, sha={first: bad})
    assert run(tmp_path, manifest, debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sha256 mismatch" in err[0] and bad in err[0]
    assert hashlib.sha256(contents[first]).hexdigest() in err[0]
    assert not (tmp_path / "alerts" / FILES[first]).exists()


def test_missing_file_inside_the_package_fails(tmp_path, deb, capsys):
    debs, contents = deb
    manifest = write_manifest(tmp_path / "m.tsv", contents, extra_path="usr/share/sounds/fake/absent.wav")
    assert run(tmp_path, manifest, debs) == 1
    assert "no file usr/share/sounds/fake/absent.wav inside" in capsys.readouterr().err


def test_missing_package_version_fails_offline(tmp_path, deb, capsys):
    debs, contents = deb
    manifest = write_manifest(tmp_path / "m.tsv", contents, version="1:0.2-1")
    assert run(tmp_path, manifest, debs) == 1
    assert f"no {PACKAGE}_1:0.2-1 .deb" in capsys.readouterr().err


def test_manifest_header_is_checked(tmp_path, deb, capsys):
    debs, _ = deb
    manifest = tmp_path / "m.tsv"
    manifest.write_text("label\tpackage\n")
    assert run(tmp_path, manifest, debs) == 1
    assert "header must be" in capsys.readouterr().err


def test_shipped_manifest_is_well_formed():
    recordings = fetcher.read_manifest(fetcher.DEFAULT_MANIFEST)
    assert recordings and all(r.note for r in recordings)


def test_a_new_debs_folder_is_made_and_filled_by_the_download(tmp_path, deb, monkeypatch, capsys):
    # The README's first run names a --debs folder that does not exist yet; the downloads must land there.
    debs, contents = deb
    manifest = write_manifest(tmp_path / "m.tsv", contents)
    fresh = tmp_path / "new" / "debs"
    fetched = []

    def fake_download(package: str, version: str, folder: Path) -> Path:  # apt-get download, without network
        fetched.append((package, version, folder))
        return Path(shutil.copy(next(debs.glob("*.deb")), folder))

    monkeypatch.setattr(fetcher, "download", fake_download)
    assert fetcher.main(["--out", str(tmp_path / "alerts"), "--manifest", str(manifest), "--debs", str(fresh)]) == 0
    assert fetched == [(PACKAGE, VERSION, fresh)] and len(list(fresh.glob("*.deb"))) == 1
    # Offline, a folder that is not there is an error, not an empty cache.
    assert run(tmp_path, manifest, tmp_path / "missing") == 1
    assert "not a folder" in capsys.readouterr().err
