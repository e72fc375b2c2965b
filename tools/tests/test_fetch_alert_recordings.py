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
from hearalert_corpus import SPLITS  # noqa: E402
from hearalert_corpus.sources import list_audio, split_of  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")

PACKAGE, VERSION = "hearalert-fake-alerts", "1:0.1-1"  # an epoch, as oxygen-sounds and twinkle-common have
FILES = {  # path inside the .deb -> label; names chosen so that split_of puts them in train, test and val
    "usr/share/sounds/fake/beep beep.wav": "alarm_clock",  # a space, as lomiri's "Alarm clock.ogg" has
    "usr/share/sounds/fake/ring20.wav": "phone_ring",
    "usr/share/sounds/fake/ring27.wav": "phone_ring",
}
SPLIT = {  # the manifest's split for each, never the one the hash gives, so only the manifest can explain it
    "usr/share/sounds/fake/beep beep.wav": "val",
    "usr/share/sounds/fake/ring20.wav": "train",
    "usr/share/sounds/fake/ring27.wav": "test",
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
                   sha: dict[str, str] | None = None, extra_path: str | None = None,
                   splits: dict[str, str] | None = None) -> Path:
    lines = ["\t".join(fetcher.MANIFEST_COLUMNS)]
    rows = list(contents.items()) + ([(extra_path, b"")] if extra_path else [])
    for inside, data in rows:
        digest = (sha or {}).get(inside, hashlib.sha256(data).hexdigest())
        label = FILES.get(inside, "doorbell")
        split = (splits or SPLIT).get(inside, "train")
        lines.append("\t".join([label, PACKAGE, version, inside, "CC0-1.0", digest, split, "test tone"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp_path: Path, manifest: Path, debs: Path, *extra: str) -> int:
    return fetcher.main(["--out", str(tmp_path / "alerts"), "--manifest", str(manifest), "--debs", str(debs),
                         "--offline", *extra])


def test_extracts_listed_files_and_takes_every_split_from_the_manifest(tmp_path, deb, capsys):
    debs, contents = deb
    manifest = write_manifest(tmp_path / "m.tsv", contents)
    sources = tmp_path / "SOURCES.tsv"
    assert run(tmp_path, manifest, debs, "--sources-tsv", str(sources)) == 0
    out = tmp_path / "alerts"
    targets = {inside: out / label / f"{PACKAGE}__{Path(inside).name}" for inside, label in FILES.items()}
    for inside, target in targets.items():
        assert target.read_bytes() == contents[inside]
        assert split_of(target.name) != SPLIT[inside], "the fixture must disagree with the hash"
    # OUT/splits.tsv: paths relative to OUT, the manifest's splits, sorted by path
    assert (out / "splits.tsv").read_text().splitlines() == ["path\tsplit"] + sorted(
        f"{target.relative_to(out).as_posix()}\t{SPLIT[inside]}" for inside, target in targets.items())
    lines = sources.read_text().splitlines()
    assert lines[0] == "source\tversion\tpath_inside\tlicence\tused_for\tsplit"
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == len(FILES)
    for source, version, inside, licence, used_for, split in rows:
        label = FILES[inside]
        assert (source, version, licence, used_for) == (PACKAGE, VERSION, "CC0-1.0", f"alert:{label}")
        assert split == SPLIT[inside]
        # make_corpus lists OUT/<label> reading OUT/splits.tsv, so it uses the file in that same split only
        assert [s for s in SPLITS if targets[inside] in list_audio(out / label, s, root=out)] == [split]
    summary = capsys.readouterr().out
    assert "alarm_clock" in summary and "sha256 ok" in summary
    assert "phone_ring    2 files" in summary and "(train 1, val 0, test 1)" in summary


@pytest.mark.parametrize("split, message", [("validation", "split 'validation' is not one of train, val, test"),
                                            ("", "split '' is not one of train, val, test")])
def test_a_bad_split_in_the_manifest_names_its_line(tmp_path, deb, capsys, split, message):
    debs, contents = deb
    first = next(iter(contents))
    manifest = write_manifest(tmp_path / "m.tsv", contents, splits={**SPLIT, first: split})
    assert run(tmp_path, manifest, debs) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"m.tsv:2: {message}" in err[0]


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


@pytest.mark.parametrize("header, message", [
    ("label\tpackage", "header must be the tab-separated columns"),
    ("label\tpackage\tversion\tpath_inside\tlicence\tsha256\tnote", "no split column; add one after sha256"),
])
def test_manifest_header_is_checked(tmp_path, deb, capsys, header, message):
    debs, _ = deb
    manifest = tmp_path / "m.tsv"
    manifest.write_text(header + "\n")
    assert run(tmp_path, manifest, debs) == 1
    assert message in capsys.readouterr().err


def test_shipped_manifest_is_well_formed():
    recordings = fetcher.read_manifest(fetcher.DEFAULT_MANIFEST)
    assert recordings and all(r.note for r in recordings)


def test_shipped_manifest_and_sources_table_agree_on_every_split():
    # models/SOURCES.tsv is written from the manifest (and tools/real_audio.tsv, whose rows are checked in
    # test_fetch_real_audio.py); a split changed in one must be changed in the other.
    rows = [line.split("\t") for line in (TOOLS.parent / "models" / "SOURCES.tsv").read_text().splitlines()[1:]]
    published = {(source, version, inside): split for source, version, inside, _, used_for, split in rows
                 if used_for.startswith("alert:")}
    manifest = {(r.package, r.version, r.path_inside): r.split for r in fetcher.read_manifest(fetcher.DEFAULT_MANIFEST)}
    assert manifest == {key: split for key, split in published.items() if key in manifest}


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
