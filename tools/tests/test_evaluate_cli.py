"""`hearalert evaluate` end to end: its scores of the detections it reports must be sed_eval's scores of the same
detections, and a malformed corpus must fail with one line naming the file and line."""

import json
import pathlib
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import soundfile

warnings.filterwarnings("ignore", category=UserWarning)  # dcase_util imports pkg_resources
import sed_eval  # noqa: E402
from make_detector_fixtures import TONE_MODEL_LABELS  # noqa: E402  (the labels of MODEL)
from test_features import hearalert_binary  # noqa: E402  (the built binary, or skip)

ROOT = pathlib.Path(__file__).resolve().parents[2]
DETECTOR_FIXTURES = ROOT / "Tests/HearAlertKitTests/Fixtures/detector"
MODEL = DETECTOR_FIXTURES / "tone_model.safetensors"


@pytest.fixture
def corpus(tmp_path):
    """Two copies of the detector fixture's alert clip and one alert-free file of noise with a 3.2 kHz beep."""
    root = tmp_path / "corpus"
    (root / "audio").mkdir(parents=True)
    for name in ("a.wav", "b.wav"):
        shutil.copy(DETECTOR_FIXTURES / "alerts_clip.wav", root / "audio" / name)
    rng = np.random.default_rng(3)
    noise = 0.05 * rng.standard_normal(3 * 16000)
    t = np.arange(noise.size) / 16000
    noise[16000:24000] += 0.3 * np.sin(2 * np.pi * 3200 * t[16000:24000])
    soundfile.write(root / "audio" / "quiet.wav", noise, 16000, subtype="PCM_16")
    (root / "corpus.json").write_text(json.dumps(
        {"format": "hearalert-corpus", "version": 1, "sample_rate": 16000, "labels": TONE_MODEL_LABELS,
         "files": {"a.wav": {"alert_snr_db": 5.0}, "b.wav": {"alert_snr_db": 5.0}}}))
    (root / "files.tsv").write_text("filename\tduration\na.wav\t8.000\nb.wav\t8.000\nquiet.wav\t3.000\n")
    events = [line.split("\t") for line in (DETECTOR_FIXTURES / "alerts_clip.tsv").read_text().splitlines()[1:]]
    rows = [f"{name}\t{onset}\t{offset}\t{label}" for name in ("a.wav", "b.wav") for _, onset, offset, label in events]
    (root / "annotations.tsv").write_text("filename\tonset\toffset\tevent_label\n" + "\n".join(rows) + "\n")
    return root


def run(*arguments):
    return subprocess.run([hearalert_binary(), "evaluate", *map(str, arguments)], capture_output=True, text=True)


def reference_lists(root):
    lines = (root / "annotations.tsv").read_text().splitlines()[1:]
    rows = [line.split("\t") for line in lines]
    return {name: [{"filename": name, "onset": float(on), "offset": float(off), "event_label": label}
                   for n, on, off, label in rows if n == name] for name in ("a.wav", "b.wav", "quiet.wav")}


def test_scores_agree_with_sed_eval_on_the_reported_detections(corpus, tmp_path):
    out = tmp_path / "report.json"
    done = run("--corpus", corpus, "--model", MODEL, "--jobs", 2, "--per-file", "--json", out)
    assert done.returncode == 0, done.stderr
    assert "event F1 (micro)" in done.stdout and "quiet.wav" in done.stdout
    report = json.loads(out.read_text())

    references = reference_lists(corpus)
    events = sed_eval.sound_event.EventBasedMetrics(event_label_list=TONE_MODEL_LABELS, t_collar=0.2,
                                                    percentage_of_length=0.5)
    segments = sed_eval.sound_event.SegmentBasedMetrics(event_label_list=TONE_MODEL_LABELS, time_resolution=1.0)
    detected = 0
    for entry in report["files"]:
        estimate = [{"filename": entry["filename"], "onset": d["onset"], "offset": d["offset"],
                     "event_label": d["label"]} for d in entry["detections"]]
        detected += len(estimate)
        events.evaluate(references[entry["filename"]], estimate)
        segments.evaluate(references[entry["filename"]], estimate, evaluated_length_seconds=entry["duration"])
    assert detected > 0

    for ours, theirs in ((report["detection"]["event_based"], events.results()),
                         (report["detection"]["segment_based"], segments.results())):
        overall = ours["overall"]["scores"]
        assert overall["f_measure"] == pytest.approx(theirs["overall"]["f_measure"]["f_measure"], abs=1e-6)
        assert overall["error_rate"] == pytest.approx(theirs["overall"]["error_rate"]["error_rate"], abs=1e-6)
        for entry in ours["class_wise"]:
            expected = theirs["class_wise"][entry["label"]]["f_measure"]["f_measure"]
            if np.isnan(expected):
                assert entry["scores"]["f_measure"] is None
            else:
                assert entry["scores"]["f_measure"] == pytest.approx(expected, abs=1e-6)
    assert [bucket["lower_db"] for bucket in report["by_alert_snr"]] == [5.0]
    assert report["timing"]["jobs"] == 2


def test_compare_puts_two_models_side_by_side(corpus, tmp_path):
    out = tmp_path / "comparison.json"
    done = run("--corpus", corpus, "--compare", MODEL, MODEL, "--json", out)
    assert done.returncode == 0, done.stderr
    comparison = json.loads(out.read_text())
    assert {"a", "b", "differences"} <= comparison.keys()
    assert all(d["b_minus_a"] in (0, None) for d in comparison["differences"])


def test_a_malformed_corpus_fails_with_one_line_naming_file_and_line(corpus):
    annotations = corpus / "annotations.tsv"
    annotations.write_text(annotations.read_text().replace("siren", "sirene", 1))
    done = run("--corpus", corpus, "--model", MODEL)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "annotations.tsv:2:" in lines[0] and "sirene" in lines[0], done.stderr
