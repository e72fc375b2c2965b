"""splits.tsv in a --speech-dir/--noise-dir/--alerts-dir: listed files go to their split, the rest keep the hash."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from hearalert_corpus import SPLITS
from hearalert_corpus.mixing import MixSettings
from hearalert_corpus.sources import list_audio, split_of
import make_corpus


def name_hashed_to(split: str, prefix: str = "", avoid: set[str] = frozenset()) -> str:
    """A file name `prefix`recN.wav that split_of puts in `split` (from the hash, not from any list)."""
    for i in range(1000):
        name = f"rec{i}.wav"
        if split_of(prefix + name) == split and name not in avoid:
            return name
    raise AssertionError("no such name")


def write_wav(path: Path, freq: float = 700.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(4000) / 16000.0
    sf.write(str(path), (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), 16000, subtype="PCM_16")
    return path


def write_list(folder: Path, *rows: str, header: str = "path\tsplit") -> None:
    (folder / "splits.tsv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")


def test_listed_files_go_to_their_split_and_unlisted_ones_keep_the_hash(tmp_path):
    # A --speech-dir / --noise-dir: paths in splits.tsv are relative to the folder, nested folders included.
    folder = tmp_path / "speech"
    moved_to_test = name_hashed_to("train")               # the hash says train, the list says test
    moved_to_train = "spk/" + name_hashed_to("val", prefix="spk/")  # the hash says val, the list says train
    kept = [name_hashed_to(s, avoid={moved_to_test}) for s in SPLITS]  # unlisted: one per split by the hash
    for name in [moved_to_test, moved_to_train, *kept]:
        write_wav(folder / name)
    write_list(folder, f"{moved_to_test}\ttest", f"{moved_to_train}\ttrain")
    expected = {split: [folder / name] for split, name in zip(SPLITS, kept)}
    expected["test"].append(folder / moved_to_test)
    expected["train"].append(folder / moved_to_train)
    expected = {split: sorted(paths) for split, paths in expected.items()}
    assert {s: list_audio(folder, s) for s in SPLITS} == expected


def test_a_folder_without_a_split_list_is_split_by_the_hash_as_before(tmp_path):
    names = [f"r{i}.wav" for i in range(30)]
    for name in names:
        write_wav(tmp_path / name)
    for split in SPLITS:
        assert list_audio(tmp_path, split) == [tmp_path / n for n in sorted(names) if split_of(n) == split]


def corpus_alert_recordings(tmp_path: Path, alerts: Path, split: str) -> list[str]:
    """The siren recordings make_corpus uses for `split`, as its corpus.json records them."""
    out = tmp_path / f"corpus-{split}"
    settings = MixSettings(clip_seconds=2.0, alert_free_fraction=0.0)
    make_corpus.generate(out, split, 3, 1, settings, workers=1, alerts_dir=str(alerts), rooms=1, utterances=2,
                         progress=False)
    return json.loads((out / "corpus.json").read_text())["alert_recordings"]["siren"]


def test_alerts_dir_list_is_relative_to_its_root_and_the_hash_stays_inside_the_label_folder(tmp_path):
    alerts = tmp_path / "alerts"
    # make_corpus lists alerts/<label>, so an unlisted file's hash is of its name inside the label folder; pick
    # one where hashing "siren/NAME" would say otherwise, so a wrong hash base cannot pass.
    listed = name_hashed_to("train")
    unlisted = next(n for n in (f"u{i}.wav" for i in range(1000))
                    if split_of(n) == "train" and split_of("siren/" + n) != "train")
    write_wav(alerts / "siren" / listed)
    write_wav(alerts / "siren" / unlisted)
    write_list(alerts, f"siren/{listed}\ttest")
    assert corpus_alert_recordings(tmp_path, alerts, "test") == [listed]
    assert corpus_alert_recordings(tmp_path, alerts, "train") == [unlisted]


ERRORS = [  # (option, splits.tsv lines after the header, line named, words in the message)
    ("--speech-dir", ["a.wav\ttrain", "absent.wav\tval"], 3, "no such file"),
    ("--noise-dir", ["a.wav\ttrain", "b.wav\tval", "a.wav\ttest"], 4, "listed twice (first on line 2)"),
    ("--speech-dir", ["a.wav\tvalidation"], 2, "split 'validation' is not one of train, val, test"),
    ("--noise-dir", ["a.wav train"], 2, "expected path<TAB>split"),
    ("--noise-dir", ["a.wav\ttrain\textra"], 2, "expected path<TAB>split"),
    ("--speech-dir", ["./a.wav\ttrain"], 2, "must be a plain path relative to"),
    ("--speech-dir", ["sub/../a.wav\ttrain"], 2, "must be a plain path relative to"),
    ("--speech-dir", ["notes.txt\ttrain"], 2, "is not an audio file"),
    ("--alerts-dir", ["siren/a.wav\ttrain", "a.wav\ttest"], 3, "is not inside a label folder"),
    ("--alerts-dir", ["c.wav\ttest"], 2, "no such file"),  # siren/c.wav is: paths are relative to the root
]


@pytest.mark.parametrize("option, rows, line, words", ERRORS)
def test_a_bad_split_list_is_a_one_line_error_naming_its_line(tmp_path, capsys, option, rows, line, words):
    folder = tmp_path / "recordings"
    for path in ("a.wav", "b.wav", "siren/a.wav", "siren/c.wav"):
        write_wav(folder / path)
    (folder / "notes.txt").write_text("not audio")
    write_list(folder, *rows)
    out = tmp_path / "corpus"
    code = make_corpus.main(["--out", str(out), "--files", "1", "--clip-seconds", "2", "--workers", "1",
                             "--no-progress", option, str(folder)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1 and f"splits.tsv:{line}: " in err[0] and words in err[0], err
    assert not out.exists(), "nothing is written before the split lists are read"


def test_a_bad_header_names_line_one(tmp_path, capsys):
    write_wav(tmp_path / "rec" / "a.wav")
    write_list(tmp_path / "rec", "a.wav\ttrain", header="file\tsplit")
    assert make_corpus.main(["--out", str(tmp_path / "c"), "--files", "1", "--noise-dir", str(tmp_path / "rec")]) == 1
    assert "splits.tsv:1: the first line must be the header path<TAB>split" in capsys.readouterr().err
