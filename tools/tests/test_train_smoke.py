"""End to end in miniature: generate a tiny corpus, train a few steps, export, and check that the C core
(alertnet, through ctypes on its shared library) loads the file and matches PyTorch's forward pass within 1e-4
on the same features — the guarantee that what a researcher trains is what the host runs."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))

import alertnet_ref  # noqa: E402
import features as feature_lib  # noqa: E402
import make_corpus  # noqa: E402
import train  # noqa: E402
from hearalert_corpus.mixing import MixSettings  # noqa: E402
from hearalert_train.data import Geometry  # noqa: E402

CORE = TOOLS.parent / "CSources" / "alertnet"


class _Error(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 512)]


def _c_core() -> ctypes.CDLL:
    subprocess.run(["make", "-s", "-C", str(CORE), "shared"], check=True)
    lib = ctypes.CDLL(str(CORE / "build" / "libalertnet.so"))
    lib.alertnet_load_file.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_Error)]
    lib.alertnet_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
    lib.alertnet_free.argtypes = [ctypes.c_void_p]
    lib.alertnet_output_count.argtypes = [ctypes.c_void_p]
    lib.alertnet_context_frames.argtypes = [ctypes.c_void_p]
    lib.alertnet_decision_step.argtypes = [ctypes.c_void_p]
    return lib


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("smoke")
    settings = MixSettings(clip_seconds=4.0, alert_free_fraction=0.2)
    make_corpus.generate(root / "train", "train", 5, 6, settings, workers=2, rooms=2, progress=False)
    make_corpus.generate(root / "val", "val", 5, 3, settings, workers=2, rooms=2, progress=False)
    out = root / "model.safetensors"
    args = train.parse_args(["--train", str(root / "train"), "--val", str(root / "val"), "--out", str(out),
                             "--steps", "6", "--eval-every", "3", "--batch", "8", "--no-tune",
                             "--report", str(root / "report.json")])
    model, spec, reports = train.train(args)
    return root, out, model, spec, reports


def test_training_writes_a_complete_model_and_report(trained):
    root, out, _, spec, reports = trained
    assert out.stat().st_size < 2 * 1024 * 1024
    ref = alertnet_ref.load(out)
    assert ref.labels == train.LABELS
    meta = json.loads(json.dumps(ref.metadata))
    assert json.loads(meta["features"]) == json.loads(json.dumps(spec))
    assert json.loads(meta["context"]) == {"frames": 48, "step": 6}
    tracker = json.loads(meta["tracker"])
    assert set(tracker) == {"smoothing_frames", "off_ratio", "min_duration", "merge_gap", "cooldown"}
    assert 0.9e5 < reports["params"] < 1.1e5
    assert set(reports["val"]["onset_only"]["class_f1"]) == set(train.LABELS)
    assert json.loads((root / "report.json").read_text())["params"] == reports["params"]


def test_c_core_matches_pytorch_on_the_same_features(trained):
    root, out, model, spec, _ = trained
    audio, _ = sf.read(str(root / "val" / "audio" / "val_00000.wav"), dtype="float32")
    feats = feature_lib.compute(audio, spec)
    geometry = Geometry.of(spec, 48, 6)
    starts, _, _ = geometry.decisions(len(feats))
    windows = [np.ascontiguousarray(feats[s:s + 48]) for s in starts[:5]]
    assert len(windows) == 5
    with torch.no_grad():
        expected = model(torch.from_numpy(np.stack(windows))[:, None]).numpy().astype(np.float64)

    lib = _c_core()
    handle, error = ctypes.c_void_p(), _Error()
    status = lib.alertnet_load_file(str(out).encode(), ctypes.byref(handle), ctypes.byref(error))
    assert status == 0, error.message.decode()
    try:
        assert lib.alertnet_output_count(handle) == 6
        assert lib.alertnet_context_frames(handle) == 48 and lib.alertnet_decision_step(handle) == 6
        for window, want in zip(windows, expected):
            got = np.zeros(6, dtype=np.float32)
            assert lib.alertnet_run(handle, window.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                    got.ctypes.data_as(ctypes.POINTER(ctypes.c_float))) == 0
            np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
            np.testing.assert_allclose(alertnet_ref.forward(alertnet_ref.load(out), window), want, atol=1e-4, rtol=0)
    finally:
        lib.alertnet_free(handle)
