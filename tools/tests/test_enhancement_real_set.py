"""Tests for the real-noise evaluation set (tools/enhancement_real_set.py, `score_enhancement.py make-real-set`):
on a small real-audio tree built here (index.tsv as fetch_real_audio.py writes it), the set has the corpus layout,
its files are at the nominal SNR (measured here with numpy), it never uses a detection-train source or a
telephone-band talker, every recording it uses has its provenance row, other roles' rows are kept, and a seed
fixes every byte. On the real tree (when present) the committed models/ENHANCEMENT_SOURCES.tsv is what the
documented command writes, and its sources are dev or test sources in models/SOURCES.tsv."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import enhancement_real_set as ers
import score_enhancement as se
from fetch_alert_recordings import SOURCES_COLUMNS, write_role_rows
from fetch_real_audio import INDEX_COLUMNS

RATE = 16000
REPO = Path(__file__).resolve().parents[2]
# The real-audio tree of tools/fetch_real_audio.py: HEARALERT_REAL_AUDIO, else corpora/real in the checkout (the
# path its README uses), else the shared development machine's copy.
REAL = next((path for path in (Path(os.environ.get("HEARALERT_REAL_AUDIO", REPO / "corpora" / "real")),
                               REPO / "corpora" / "real", Path("/work/corpora/real"))
             if (path / "index.tsv").is_file()), REPO / "corpora" / "real")


def utterance(rng: np.random.Generator, seconds: float, wideband: bool) -> np.ndarray:
    """A voiced burst with breath noise; `wideband` False keeps it under 3.4 kHz, as a telephone prompt."""
    t = np.arange(int(seconds * RATE)) / RATE
    f0 = rng.uniform(100, 220)
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 40) if k * f0 < (7500 if wideband else 3400))
    if wideband:
        x = x + 0.3 * rng.standard_normal(len(t))
    return 0.1 * x * np.hanning(len(t))


def build_tree(root: Path, seed: int = 0) -> Path:
    """A real-audio tree: 7 wideband talkers and one telephone-band one (dev, test), street and music noise
    (test), and a train source holding speech and street noise that the set must never use."""
    rng = np.random.default_rng(seed)
    rows = []

    def add(role: str, group: str, kind: str, source: str, name: str, x: np.ndarray, source_type: str = "deb"):
        path = f"{role}/alert_free/{group}/{source}__{name}.wav"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(root / path), x.astype(np.float32), RATE, subtype="PCM_16")
        rows.append((path, role, kind, source_type, source, "1.0-1", f"usr/share/{source}/{name}.ogg",
                     "CC0-1.0", "0" * 64, f"{len(x) / RATE:.2f}"))

    for i, (role, lang) in enumerate([("dev", "en"), ("dev", "fr"), ("dev", "de"), ("test", "en"), ("test", "es"),
                                      ("test", "it"), ("test", "nl")]):
        source = "talk-dev" if role == "dev" else "talk-test"
        for j in range(4):
            add(role, "speech", f"speech:{lang}", source, f"{lang}{i}_{j}", utterance(rng, 1.0, True))
    for j in range(4):
        add("test", "speech", "speech:ru", "phone-prompts", f"ru_{j}", utterance(rng, 1.0, False))
        add("train", "speech", "speech:en", "train-voices", f"en_{j}", utterance(rng, 1.0, True))
    for j in range(3):
        add("test", "ambient", "ambient:street", "field-noise", f"street{j}", 0.05 * rng.standard_normal(3 * RATE),
            source_type="git")
        add("test", "music", "music", "tunes", f"song{j}",
            0.1 * np.sin(2 * np.pi * (220 + 50 * j) * np.arange(5 * RATE) / RATE))
    add("train", "ambient", "ambient:street", "train-noise", "street", 0.05 * rng.standard_normal(4 * RATE))
    for j in range(4):  # a dev source the set does not list (SET_SOURCES): it must never be drawn
        add("dev", "speech", "speech:sv", "unlisted-voices", f"sv_{j}", utterance(rng, 1.0, True))
        add("dev", "music", "music", "unlisted-tunes", f"tune{j}",
            0.1 * np.sin(2 * np.pi * (300 + 40 * j) * np.arange(5 * RATE) / RATE))
    with open(root / "index.tsv", "w", encoding="utf-8") as f:
        f.write("\t".join(INDEX_COLUMNS) + "\n")
        for row in sorted(rows):
            f.write("\t".join(row) + "\n")
    return root


# The tree's sources the set may draw on, in place of the shipped set's own list.
TREE_SOURCES = frozenset({"talk-dev", "talk-test", "phone-prompts", "git:field-noise", "tunes", "train-voices",
                          "train-noise"})


@pytest.fixture
def small_talkers(monkeypatch):
    monkeypatch.setattr(ers, "MIN_TALKER_SECONDS", 3.0)   # the tree's talkers hold 4 s each
    monkeypatch.setattr(ers, "SET_SOURCES", TREE_SOURCES)


def make(tree: Path, out: Path, seed: int = 3) -> tuple[list[str], list[tuple[str, ...]]]:
    names, rows, _ = ers.make_real_set(tree, out, seed, files_per_condition=2, seconds=3.0, snrs=[0.0, 10.0],
                                       noises=["babble", "street", "music"])
    return names, rows


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path, list[tuple[str, ...]]]:
    root = tmp_path_factory.mktemp("real-set")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ers, "MIN_TALKER_SECONDS", 3.0)
        patch.setattr(ers, "SET_SOURCES", TREE_SOURCES)
        tree = build_tree(root / "real")
        _, rows = make(tree, root / "set")
    return tree, root / "set", rows


def index_rows(tree: Path) -> dict[str, dict]:
    with open(tree / "index.tsv", encoding="utf-8") as f:
        return {row["path"]: row for row in csv.DictReader(f, delimiter="\t")}


def test_the_set_has_the_corpus_layout(made):
    _, out, _ = made
    meta = json.loads((out / "corpus.json").read_text())
    assert (meta["format"], meta["version"], meta["sample_rate"], meta["role"]) == \
        ("hearalert-corpus", 1, 16000, "enhancer-test")
    rows = (out / "files.tsv").read_text().splitlines()
    assert rows[0] == "filename\tduration" and len(rows) == 1 + 3 * 2 * 2
    assert (out / "annotations.tsv").read_text() == "filename\tonset\toffset\tevent_label\n"
    for row in rows[1:]:
        name, duration = row.split("\t")
        assert meta["files"][name]["noise"] == name.split("_")[0]
        for sub in ("audio", "clean"):
            info = sf.info(str(out / sub / name))
            assert (info.samplerate, info.channels, info.frames) == (16000, 1, round(float(duration) * 16000))


def test_every_file_is_at_its_nominal_snr_with_a_speech_free_lead_in(made):
    _, out, _ = made
    meta = json.loads((out / "corpus.json").read_text())
    for name, info in meta["files"].items():
        noisy, _ = sf.read(str(out / "audio" / name), dtype="float64")
        clean, _ = sf.read(str(out / "clean" / name), dtype="float64")
        achieved = 10 * np.log10(np.sum(clean ** 2) / np.sum((noisy - clean) ** 2))
        assert achieved == pytest.approx(info["speech_snr_db"], abs=0.05), name
        assert np.all(clean[:RATE] == 0) and np.any(clean[RATE:] != 0)
        assert 20 * np.log10(np.sqrt(np.mean(clean ** 2))) == pytest.approx(-26.0, abs=0.5)


def test_no_detection_train_source_and_no_telephone_band_talker_is_used(made):
    tree, out, rows = made
    meta = json.loads((out / "corpus.json").read_text())
    index = index_rows(tree)
    used = {path for info in meta["files"].values() for path in info["speech"] + info["noise_recordings"]}
    assert used and all(index[path]["role"] in ("dev", "test") for path in used)
    assert not {index[path]["source"] for path in used} & {"train-voices", "train-noise", "phone-prompts"}
    assert not {row[0] for row in rows} & {"train-voices", "train-noise", "phone-prompts"}
    # A dev source outside the set's list is never drawn, so new manifest rows leave the set as it is.
    assert not {index[path]["source"] for path in used} & {"unlisted-voices", "unlisted-tunes"}
    # Babble never holds the file's own talker.
    for info in meta["files"].values():
        if info["noise"] == "babble":
            talker = info["talker"].split(" ")
            assert not [p for p in info["noise_recordings"]
                        if (index[p]["source"], index[p]["kind"]) == (talker[0], talker[1])]


def test_every_recording_used_has_exactly_its_provenance_row(made, tmp_path):
    tree, out, rows = made
    meta = json.loads((out / "corpus.json").read_text())
    index = index_rows(tree)
    expected = set()
    for info in meta["files"].values():
        for path in info["speech"]:
            expected.add((path, index[path]["kind"]))
        for path in info["noise_recordings"]:
            expected.add((path, f"noise:{info['noise']}"))

    def name(e):
        return e["source"] if e["source_type"] == "deb" else f"{e['source_type']}:{e['source']}"
    assert set(rows) == {(name(index[p]), index[p]["version"], index[p]["path_inside"], index[p]["licence"],
                          used_for, "enhancer-test") for p, used_for in expected}
    assert any(row[0] == "git:field-noise" for row in rows)


def test_rewriting_the_table_keeps_other_roles_rows(made, tmp_path):
    _, _, rows = made
    table = tmp_path / "ENHANCEMENT_SOURCES.tsv"
    other = ("zz-pkg", "2", "usr/share/zz.wav", "MIT", "noise:street", "enhancer-train")
    stale = ("aa-pkg", "1", "usr/share/aa.wav", "MIT", "noise:street", "enhancer-test")
    table.write_text("\t".join(SOURCES_COLUMNS) + "\n" + "\t".join(other) + "\n" + "\t".join(stale) + "\n")
    assert write_role_rows(table, "enhancer-test", rows) == 1
    lines = table.read_text().splitlines()
    assert lines[0] == "\t".join(SOURCES_COLUMNS)
    written = [tuple(line.split("\t")) for line in lines[1:]]
    assert written == sorted(set(rows) | {other}) and stale not in written
    table.write_text("source\tversion\n")
    with pytest.raises(ValueError, match="expected the header"):
        write_role_rows(table, "enhancer-test", rows)


def test_the_same_seed_makes_the_same_bytes(made, tmp_path, small_talkers):
    tree, out, rows = made
    _, again = make(tree, tmp_path / "again")
    assert again == rows
    # Tables byte for byte; audio sample for sample (libsndfile stamps the time into a float WAV's PEAK chunk).
    for path in sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()):
        if path.suffix == ".wav":
            assert np.array_equal(sf.read(str(out / path))[0], sf.read(str(tmp_path / "again" / path))[0]), path
        else:
            assert (out / path).read_bytes() == (tmp_path / "again" / path).read_bytes(), path
    make(tree, tmp_path / "other", seed=4)
    assert not np.array_equal(sf.read(str(out / "audio" / "street_snr00_00.wav"))[0],
                              sf.read(str(tmp_path / "other" / "audio" / "street_snr00_00.wav"))[0])


def test_a_source_in_train_and_test_is_refused(tmp_path, small_talkers):
    tree = build_tree(tmp_path / "real")
    text = (tree / "index.tsv").read_text().replace("\ttrain\tambient:street\tdeb\ttrain-noise\t",
                                                    "\ttrain\tambient:street\tgit\tfield-noise\t")
    (tree / "index.tsv").write_text(text)
    with pytest.raises(ers.RealSetError, match="field-noise has both train and test"):
        make(tree, tmp_path / "set")


def test_a_kind_with_no_recording_is_a_one_line_error(tmp_path, small_talkers, capsys):
    tree = build_tree(tmp_path / "real")
    with pytest.raises(SystemExit):
        se.main(["make-real-set", "--real", str(tree), "--out", str(tmp_path / "set"), "--noises", "wind-rain"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no dev or test recording for noise kind 'wind-rain'" in error


def test_the_committed_table_holds_only_dev_and_test_sources():
    """models/ENHANCEMENT_SOURCES.tsv against models/SOURCES.tsv (no audio needed: runs everywhere)."""
    def read(path: Path) -> list[tuple[str, ...]]:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert tuple(lines[0].split("\t")) == SOURCES_COLUMNS
        return [tuple(line.split("\t")) for line in lines[1:]]
    enhancement = [row for row in read(REPO / "models" / "ENHANCEMENT_SOURCES.tsv") if row[5] == "enhancer-test"]
    detection = read(REPO / "models" / "SOURCES.tsv")
    assert enhancement and enhancement == sorted(set(enhancement))
    train_sources = {row[0] for row in detection if row[5] == "train"}
    split_of = {row[:4]: row[5] for row in detection}
    for row in enhancement:
        assert row[0] not in train_sources, row
        assert split_of.get(row[:4]) in ("dev", "test"), row


@pytest.mark.skipif(not (REAL / "index.tsv").is_file(),
                    reason="no real-audio tree (set HEARALERT_REAL_AUDIO, or make corpora/real with "
                    "tools/fetch_real_audio.py; CI has none)")
def test_the_committed_table_is_what_the_documented_command_writes(tmp_path):
    table = tmp_path / "ENHANCEMENT_SOURCES.tsv"
    shutil.copy(REPO / "models" / "ENHANCEMENT_SOURCES.tsv", table)
    assert se.main(["make-real-set", "--real", str(REAL), "--out", str(tmp_path / "set"), "--seed", "20261126",
                    "--sources-tsv", str(table)]) == 0
    assert table.read_text() == (REPO / "models" / "ENHANCEMENT_SOURCES.tsv").read_text()
