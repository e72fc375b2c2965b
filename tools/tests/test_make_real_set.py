"""make_real_set.py: corpora of real recordings only (alert-free excerpts, mixtures, isolated alerts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import make_real_set
from corpus_format import read_corpus

SR = 16000


def _write(path: Path, x: np.ndarray, rate: int = SR) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), x.astype(np.float32), rate, subtype="FLOAT")


def _beeps(on: float, off: float, count: int, freq: float = 3100.0) -> np.ndarray:
    """`count` tone bursts of `on` s separated by `off` s of silence."""
    t = np.arange(int(on * SR)) / SR
    burst = 0.5 * np.sin(2 * np.pi * freq * t)
    gap = np.zeros(int(off * SR))
    return np.concatenate([np.concatenate([burst, gap]) for _ in range(count)])[: -len(gap) or None]


@pytest.fixture()
def real_tree(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    root = tmp_path / "real"
    _write(root / "dev/alert_free/speech/talk.wav", 0.1 * rng.standard_normal(25 * SR))     # 10 + 10 + 5 s
    rain = 0.05 * rng.standard_normal(int(12.5 * 44100))
    _write(root / "dev/alert_free/ambient:rain/rain.wav", rain, 44100)  # 10 + 2.5 s, resampled
    _write(root / "dev/alerts/smoke_alarm/t3.wav", _beeps(0.5, 0.5, 3))          # one event: gaps under 1 s
    _write(root / "dev/alerts/doorbell/two.wav", _beeps(0.4, 1.5, 2, 700.0))      # two events: a 1.5-s gap
    _write(root / "test/alert_free/music/song.wav", 0.1 * rng.standard_normal(30 * SR))
    return root


def _run(real: Path, out: Path, *extra: str) -> int:
    return make_real_set.main(["--real", str(real), "--role", "dev", "--out", str(out), "--seed", "3", *extra])


def _active_power(x: np.ndarray) -> float:
    """Mean power over the 20 ms frames within 40 dB of the loudest (mixing.py's definition), written anew."""
    frames = x[: len(x) // 320 * 320].astype(np.float64).reshape(-1, 320)
    power = (frames ** 2).mean(axis=1)
    return float(power[power >= power.max() * 1e-4].mean())


def test_the_three_kinds_of_file_with_measured_events(real_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert _run(real_tree, out) == 0
    assert not (out / "alerts").exists()
    corpus = read_corpus(out, check_audio=True)
    kinds = {f.filename: corpus.file_extras(f.filename)["kind"] for f in corpus.files}
    free = sorted(n for n, k in kinds.items() if k == "free")
    assert len(free) == 5  # 25 s -> 10, 10, 5; 12.5 s -> 10, 2.5 (a tail of 2 s or more is kept)
    assert sorted(round(f.duration, 3) for f in corpus.files if kinds[f.filename] == "free") == [2.5, 5, 10, 10, 10]
    assert all(not corpus.events_of(n) for n in free)
    assert sum(k == "mixture" for k in kinds.values()) == 8 and sum(k == "isolated" for k in kinds.values()) == 2
    assert "song" not in json.dumps(corpus.meta["files"]), "a test-role recording leaked into the dev set"
    for name, kind in kinds.items():
        if kind == "free":
            continue
        events = corpus.events_of(name)
        source = corpus.file_extras(name)["source"]
        if "t3" in source:
            assert [e.label for e in events] == ["smoke_alarm"]
            assert events[0].offset - events[0].onset == pytest.approx(2.5, abs=0.05)
        else:
            assert [e.label for e in events] == ["doorbell", "doorbell"]
            assert events[1].onset - events[0].onset == pytest.approx(1.9, abs=0.05)
        if kind == "isolated":
            assert events[0].onset == pytest.approx(1.0, abs=0.03)


def test_mixtures_hold_the_alert_at_the_recorded_snr_in_every_bucket(real_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert _run(real_tree, out, "--alert-components") == 0
    meta = json.loads((out / "corpus.json").read_text())
    snrs = []
    for name, info in meta["files"].items():
        if info["kind"] != "mixture":
            if info["kind"] == "free":
                assert not sf.read(str(out / "alerts" / name))[0].any()
            continue
        mix, _ = sf.read(str(out / "audio" / name), dtype="float64")
        alert, _ = sf.read(str(out / "alerts" / name), dtype="float64")
        background = mix - alert
        measured = 10 * np.log10(_active_power(alert) / np.mean(background ** 2))
        assert measured == pytest.approx(info["alert_snr_db"], abs=0.3)
        snrs.append(info["alert_snr_db"])
    buckets = sorted({int(np.floor(s / 5)) for s in snrs})
    assert buckets == [-1, 0, 1, 2]  # -5..0, 0..5, 5..10, 10..15: each alert once in each


def test_speed_changes_each_mixture_alerts_pitch_and_cadence_together(real_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert _run(real_tree, out, "--alert-components", "--mixtures-per-alert", "6", "--speed", "0.8,1.25") == 0
    corpus = read_corpus(out, check_audio=True)
    speeds = []
    for f in corpus.files:
        info = corpus.file_extras(f.filename)
        if info["kind"] == "free" or "t3" not in info["source"]:
            continue
        events = corpus.events_of(f.filename)
        if info["kind"] == "isolated":  # the recording as it is
            assert "alert_speed" not in info
            assert events[0].offset - events[0].onset == pytest.approx(2.5, abs=0.05)
            continue
        speed = info["alert_speed"]
        assert 0.8 <= speed <= 1.25
        speeds.append(speed)
        assert events[0].offset - events[0].onset == pytest.approx(2.5 / speed, abs=0.05)
        alert, _ = sf.read(str(out / "alerts" / f.filename), dtype="float64")
        spectrum = np.abs(np.fft.rfft(alert))
        peak_hz = np.argmax(spectrum) * SR / len(alert)
        assert peak_hz == pytest.approx(3100.0 * speed, rel=0.005)
    assert len(speeds) == 6 and max(speeds) - min(speeds) > 0.05, speeds


@pytest.mark.parametrize("bad", ["1.2,0.9", "0.3,1.0", "fast", "0.9"])
def test_a_bad_speed_range_is_refused(real_tree: Path, tmp_path: Path, bad: str) -> None:
    with pytest.raises(SystemExit) as stop:
        _run(real_tree, tmp_path / "x", "--speed", bad)
    assert stop.value.code == 2 and not (tmp_path / "x").exists()


def test_short_recordings_of_a_kind_share_excerpts(tmp_path: Path) -> None:
    root = tmp_path / "real"
    for k in range(3):  # three 4-s prompts: 10 s, then a 2-s tail
        _write(root / f"dev/alert_free/speech/p{k}.wav", np.full(4 * SR, 0.01 * (k + 1)))
    _write(root / "dev/alert_free/music/m.wav", np.full(SR, 0.5))  # 1 s alone: too short for an excerpt
    assert _run(root, tmp_path / "set", "--kinds", "free") == 0
    corpus = read_corpus(tmp_path / "set", check_audio=True)
    assert [f.duration for f in corpus.files] == [10.0, 2.0]
    first = corpus.file_extras(corpus.files[0].filename)["pieces"]
    assert [(p["source"].split("/")[-1], p["offset_s"], p["at_s"]) for p in first] == [
        ("p0.wav", 0.0, 0.0), ("p1.wav", 0.0, 4.0), ("p2.wav", 0.0, 8.0)]
    assert corpus.file_extras(corpus.files[1].filename)["pieces"][0]["offset_s"] == 2.0
    audio, _ = sf.read(str(corpus.audio_path(corpus.files[0].filename)))
    np.testing.assert_allclose(audio[[0, 4 * SR, 8 * SR]], [0.01, 0.02, 0.03], atol=1e-4)


def test_kinds_choose_what_is_made(real_tree: Path, tmp_path: Path) -> None:
    assert _run(real_tree, tmp_path / "free", "--kinds", "free") == 0
    assert _run(real_tree, tmp_path / "alerts", "--kinds", "mixture,isolated") == 0
    kinds = [{info["kind"] for info in json.loads((tmp_path / name / "corpus.json").read_text())["files"].values()}
             for name in ("free", "alerts")]
    assert kinds == [{"free"}, {"mixture", "isolated"}]
    with pytest.raises(SystemExit) as stop:
        make_real_set.main(["--real", str(real_tree), "--role", "dev", "--out", str(tmp_path / "x"),
                            "--kinds", "free,noise"])
    assert stop.value.code == 2 and not (tmp_path / "x").exists()


def test_same_seed_same_files(real_tree: Path, tmp_path: Path) -> None:
    assert _run(real_tree, tmp_path / "a") == 0 and _run(real_tree, tmp_path / "b") == 0
    for path in sorted((tmp_path / "a").rglob("*.*")):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes(), path


def test_bad_input_is_one_line_and_nothing_is_replaced(real_tree: Path, tmp_path: Path, capsys) -> None:
    (real_tree / "dev/alerts/fire_truck").mkdir()
    assert _run(real_tree, tmp_path / "x") == 1
    assert "'fire_truck' is not one of the labels" in capsys.readouterr().err
    (real_tree / "dev/alerts/fire_truck").rmdir()
    out = tmp_path / "kept"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert _run(real_tree, out) == 1
    assert "pass --force" in capsys.readouterr().err and (out / "mine.txt").read_text() == "keep"
    assert make_real_set.main(["--real", str(real_tree), "--role", "val", "--out", str(tmp_path / "y")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_alerts_stored_as_mp3_are_listed(tmp_path: Path) -> None:
    """fetch_real_audio.py stores an alert as its source does, MP3 included (sources.AUDIO_SUFFIXES)."""
    from hearalert_corpus.real_sets import list_role

    role = tmp_path / "dev"
    _write(role / "alert_free/speech/talk.wav", 0.1 * np.random.default_rng(1).standard_normal(5 * SR))
    horn = role / "alerts/car_horn/horn.mp3"
    horn.parent.mkdir(parents=True)
    sf.write(str(horn), _beeps(0.3, 0.2, 2, 420.0).astype(np.float32), SR, format="MP3")
    free, alerts = list_role(role)
    assert [(a.relative, a.kind) for a in alerts] == [("alerts/car_horn/horn.mp3", "car_horn")]
    assert [f.kind for f in free] == ["speech"]


@pytest.fixture()
def train_tree(tmp_path: Path) -> Path:
    """A train role with alert-free speech, a doorbell and two unlabelled sound effects (4 s and 8 s)."""
    rng = np.random.default_rng(2)
    root = tmp_path / "real"
    _write(root / "train/alert_free/speech/talk.wav", 0.1 * rng.standard_normal(12 * SR))
    _write(root / "train/alerts/doorbell/two.wav", _beeps(0.4, 1.5, 2, 700.0))
    _write(root / "train/unlabelled/effects/a_horn.wav", _beeps(0.5, 0.5, 5, 420.0)[: 4 * SR])
    _write(root / "train/unlabelled/effects/b_beep.wav", np.full(8 * SR, 0.02))
    return root


def _train(real: Path, out: Path, *extra: str) -> int:
    return make_real_set.main(["--real", str(real), "--role", "train", "--out", str(out), "--seed", "13", *extra])


def test_effects_make_an_unlabelled_set_of_excerpts(train_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "fx"
    assert _train(train_tree, out, "--kinds", "effects") == 0
    corpus = read_corpus(out, check_audio=True)
    assert corpus.meta["unlabelled"] is True and corpus.unlabelled and not corpus.events
    assert corpus.meta["real_sources"] == {"unlabelled_recordings": 2}
    # 4 + 8 s played one after another: a 10-s excerpt and a 2-s tail, named fx_, extras as free_ files have them.
    assert [(f.filename, f.duration) for f in corpus.files] == [("fx_00000.wav", 10.0), ("fx_00001.wav", 2.0)]
    extras = corpus.file_extras("fx_00000.wav")
    assert (extras["kind"], extras["source_kind"]) == ("effects", "effects")
    assert [(p["source"], p["offset_s"], p["at_s"]) for p in extras["pieces"]] == [
        ("unlabelled/effects/a_horn.wav", 0.0, 0.0), ("unlabelled/effects/b_beep.wav", 0.0, 4.0)]
    assert corpus.file_extras("fx_00001.wav")["pieces"] == [
        {"source": "unlabelled/effects/b_beep.wav", "offset_s": 6.0, "at_s": 0.0}]
    audio, _ = sf.read(str(corpus.audio_path("fx_00001.wav")))
    np.testing.assert_allclose(audio, 0.02, atol=1e-4)


def test_no_other_kind_of_set_draws_on_the_unlabelled_recordings(train_tree: Path, tmp_path: Path) -> None:
    from hearalert_corpus.real_sets import list_role

    free, alerts = list_role(train_tree / "train")
    assert [r.relative for r in free + alerts] == ["alert_free/speech/talk.wav", "alerts/doorbell/two.wav"]
    assert _train(train_tree, tmp_path / "all", "--mixtures-per-alert", "8") == 0
    meta = (tmp_path / "all" / "corpus.json").read_text()
    assert "unlabelled" not in meta and "a_horn" not in meta and "b_beep" not in meta


@pytest.mark.parametrize("extra, message", [
    (["--kinds", "effects,free"], "effects makes an unlabelled set and goes alone"),
    (["--kinds", "effects", "--role", "dev"], "--kinds effects needs --role train"),
    (["--kinds", "effects", "--alert-components"], "leave out --alert-components"),
])
def test_effects_are_refused_with_other_kinds_and_outside_train(train_tree: Path, tmp_path: Path, capsys, extra,
                                                                message) -> None:
    with pytest.raises(SystemExit) as stop:
        _train(train_tree, tmp_path / "x", *extra)
    assert stop.value.code == 2 and message in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_effects_without_unlabelled_recordings_is_one_line(real_tree: Path, tmp_path: Path, capsys) -> None:
    (real_tree / "train/alert_free/speech").mkdir(parents=True)
    assert _train(real_tree, tmp_path / "x", "--kinds", "effects") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unlabelled: no such folder" in err and not (tmp_path / "x").exists()


def test_free_sources_draw_alert_free_audio_and_backgrounds_from_the_named_sources_only(tmp_path: Path,
                                                                                       capsys) -> None:
    rng = np.random.default_rng(1)
    root = tmp_path / "real"
    _write(root / "test/alert_free/speech/old-pkg__talk.wav", 0.1 * rng.standard_normal(20 * SR))
    _write(root / "test/alert_free/music/Some+Repo__song.wav", 0.1 * rng.standard_normal(20 * SR))
    _write(root / "test/alert_free/music/new-pkg__tune.wav", 0.1 * rng.standard_normal(15 * SR))
    _write(root / "test/alerts/smoke_alarm/old-pkg__t3.wav", _beeps(0.5, 0.5, 3))
    out = tmp_path / "set"
    args = ["--real", str(root), "--role", "test", "--out", str(out), "--seed", "3", "--mixtures-per-alert", "3"]
    assert make_real_set.main([*args, "--free-sources", "new-pkg,Some/Repo"]) == 0
    corpus = read_corpus(out)
    used = set()
    for f in corpus.files:
        extras = corpus.file_extras(f.filename)
        used |= {p["source"] for p in extras.get("pieces", [])}
        if extras.get("background"):
            used.add(extras["background"])
    assert used == {"alert_free/music/Some+Repo__song.wav", "alert_free/music/new-pkg__tune.wav"}
    # The alerts still come from the whole role: one mixture per draw and the isolated recording.
    kinds = [corpus.file_extras(f.filename)["kind"] for f in corpus.files]
    assert kinds.count("mixture") == 3 and kinds.count("isolated") == 1
    assert json.loads((out / "corpus.json").read_text())["real_sources"]["alert_free_sources"] == ["new-pkg",
                                                                                                 "Some/Repo"]
    # A source the role has no alert-free audio of is one line, and nothing is written.
    assert make_real_set.main([*args, "--out", str(tmp_path / "none"), "--free-sources", "new-pkg,gone"]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        "error: --free-sources: no alert-free recording of gone in role 'test'"
    assert not (tmp_path / "none").exists()


def test_adding_an_alert_leaves_the_other_alerts_files_as_they_were(real_tree: Path, tmp_path: Path) -> None:
    # Each alert's files are drawn from the set's seed and the alert's own path, not from one stream for the set:
    # with one stream, every alert's backgrounds and levels were drawn again whenever the role gained an alert.
    assert _run(real_tree, tmp_path / "before") == 0
    _write(real_tree / "dev/alerts/siren/wail.wav", 0.5 * np.sin(2 * np.pi * 900 * np.arange(2 * SR) / SR))
    assert _run(real_tree, tmp_path / "after") == 0

    def by_alert(out: Path) -> dict[tuple[str, str, int], bytes]:
        corpus = read_corpus(out)
        seen: dict[tuple[str, str], int] = {}
        files = {}
        for f in corpus.files:
            extras = corpus.file_extras(f.filename)
            if extras["kind"] == "free":
                continue
            key = (extras["source"], extras["kind"])
            seen[key] = seen.get(key, -1) + 1
            files[(*key, seen[key])] = (out / "audio" / f.filename).read_bytes()
        return files

    before, after = by_alert(tmp_path / "before"), by_alert(tmp_path / "after")
    assert len(after) == len(before) + 5  # the siren's four mixtures and its isolated file
    assert {key: data for key, data in after.items() if key in before} == before
    # Another seed draws other files for the same alerts.
    assert _run(real_tree, tmp_path / "other", "--seed", "4") == 0
    assert by_alert(tmp_path / "other") != after
