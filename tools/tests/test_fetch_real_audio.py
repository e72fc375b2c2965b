"""fetch_real_audio.py against a tiny .deb, wheel and git repository built here: layout, roles, hashes, durations,
zip members, SOURCES rows and the shipped manifest. Offline."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import fetch_real_audio as real
from fake_debs import build_deb
from hearalert_corpus.sources import list_alert_recordings, list_audio

TOOLS = Path(__file__).resolve().parents[1]

PACKAGE, VERSION = "hearalert-fake-audio", "2:1.0-1"
REPO = "someone/fake-sounds"


def audio(freq: float, seconds: float, rate: int, channels: int = 1, fmt: str = "WAV") -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    x = (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, np.stack([x] * channels, axis=1), rate, format=fmt,
             subtype="PCM_16" if fmt == "WAV" else "VORBIS")
    return buf.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


SPEECH = audio(300, 1.5, 8000)  # telephone-rate speech stand-in
MUSIC = audio(440, 2.0, 44100, channels=2, fmt="OGG")
RAIN = audio(2000, 1.25, 22050)
SIREN = audio(900, 3.0, 16000)
ARCHIVE = zip_bytes({"audio/ambient/rain.wav": RAIN})
DEB_FILES = {
    "usr/share/sounds/voice/hello.wav": SPEECH,
    "usr/share/games/fake/music/theme.ogg": MUSIC,
    "usr/share/games/fake/public.zip": ARCHIVE,
    "usr/share/games/fake/base/0snd.pk3": ARCHIVE,
    "usr/share/games/fake/base.wz": ARCHIVE,
}
WHEEL_FILES = {"fakepkg/res/siren.wav": SIREN}
GIT_FILES = {"recordings/0_alice_0.wav": SPEECH, "alarms/beep.wav": audio(3100, 2.0, 16000)}


@pytest.fixture()
def world(tmp_path: Path) -> dict:
    """A cache with one .deb and one wheel, a mirror folder with one bare repository, and its commit."""
    cache = tmp_path / "cache"
    debs = build_deb(tmp_path, PACKAGE, VERSION, DEB_FILES, "fake sounds")
    (cache / "debs").mkdir(parents=True)
    shutil.copy(next(debs.glob("*.deb")), cache / "debs" / "fake.deb")
    (cache / "wheels").mkdir()
    (cache / "wheels" / "FakePkg-0.3-py3-none-any.whl").write_bytes(zip_bytes(WHEEL_FILES))
    if shutil.which("git") is None:
        pytest.skip("needs git")
    mirror = tmp_path / "mirror"
    commit = mirrored_repository(tmp_path / "work", GIT_FILES, mirror / "someone+fake-sounds")
    return {"cache": cache, "mirror": mirror, "commit": commit, "tmp": tmp_path}


def mirrored_repository(work: Path, files: dict[str, bytes], mirrored: Path) -> str:
    """`files` committed in a new repository at `work`, cloned bare to MIRRORED/repo; the commit."""
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    subprocess.run(["git", *env, "-C", str(work), "commit", "-q", "-m", "sounds"], check=True)
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrored / "repo")], check=True)
    return commit


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rows(commit: str) -> list[list[str]]:
    return [
        ["speech:en", "deb", PACKAGE, VERSION, "usr/share/sounds/voice/hello.wav", "CC-BY-3.0", sha(SPEECH), "dev",
         "1.5", "a voice prompt"],
        ["music", "deb", PACKAGE, VERSION, "usr/share/games/fake/music/theme.ogg", "GPL-2.0-or-later", sha(MUSIC),
         "dev", "2.0", "a theme"],
        ["ambient:rain", "deb", PACKAGE, VERSION, "usr/share/games/fake/public.zip#audio/ambient/rain.wav",
         "CC-BY-SA-3.0", sha(RAIN), "dev", "1.25", "rain in a zip"],
        ["siren", "pypi", "fakepkg", "0.3", "fakepkg/res/siren.wav", "Apache-2.0", sha(SIREN), "train", "3.0",
         "900 Hz tone"],
        ["speech:en", "git", REPO, commit, "recordings/0_alice_0.wav", "CC-BY-SA-4.0", sha(SPEECH), "test", "1.5",
         "a digit"],
        ["smoke_alarm", "git", REPO, commit, "alarms/beep.wav#t=0.5,1.5", "CC0-1.0",
         sha(GIT_FILES["alarms/beep.wav"]), "test", "1.0", "3.1 kHz beep"],
    ]


def write(path: Path, table: list[list[str]]) -> Path:
    path.write_text("\n".join("\t".join(r) for r in [list(real.MANIFEST_COLUMNS), *table]) + "\n")
    return path


def run(world: dict, manifest: Path, *extra: str) -> int:
    return real.main(["--out", str(world["tmp"] / "out"), "--cache", str(world["cache"]), "--mirror-dir",
                      str(world["mirror"]), "--manifest", str(manifest), "--alerts-manifest", "", "--offline",
                      *extra])


def test_every_source_type_lands_in_its_role_and_kind(world):
    manifest = write(world["tmp"] / "m.tsv", rows(world["commit"]))
    sources = world["tmp"] / "SOURCES.tsv"
    assert run(world, manifest, "--sources-tsv", str(sources)) == 0
    out = world["tmp"] / "out"
    speech = out / "dev/alert_free/speech/hearalert-fake-audio__sounds~voice~hello.wav"
    music = out / "dev/alert_free/music/hearalert-fake-audio__fake~music~theme.wav"
    rain = out / "dev/alert_free/ambient/hearalert-fake-audio__fake~public.zip~audio~ambient~rain.wav"
    for path, seconds in ((speech, 1.5), (music, 2.0), (rain, 1.25)):
        info = sf.info(str(path))
        assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
        assert info.frames == int(seconds * 16000)
    # Alerts keep their bytes (an excerpt becomes a WAV of its range, at its own rate).
    assert (out / "train/alerts/siren/fakepkg__siren.wav").read_bytes() == SIREN
    beep = sf.info(str(out / "test/alerts/smoke_alarm/someone+fake-sounds__beep__t0.5-1.5s.wav"))
    assert (beep.samplerate, beep.frames) == (16000, 16000)
    assert (out / "test/alert_free/speech/someone+fake-sounds__recordings~0_alice_0.wav").is_file()
    # The index lists every file with its provenance; SOURCES rows carry the role as split.
    index = (out / "index.tsv").read_text().splitlines()
    assert index[0].split("\t") == list(real.INDEX_COLUMNS) and len(index) == 7
    table = [line.split("\t") for line in sources.read_text().splitlines()]
    assert table[0] == ["source", "version", "path_inside", "licence", "used_for", "split"]
    assert ["pypi:fakepkg", "0.3", "fakepkg/res/siren.wav", "Apache-2.0", "alert:siren", "train"] in table
    assert [f"git:{REPO}", world["commit"], "recordings/0_alice_0.wav", "CC-BY-SA-4.0", "speech:en",
            "test"] in table


def test_make_corpus_sees_each_role_only_in_its_split(world):
    assert run(world, write(world["tmp"] / "m.tsv", rows(world["commit"]))) == 0
    out = world["tmp"] / "out"
    free = out / "dev/alert_free"
    assert len(list_audio(free, "val")) == 3 and list_audio(free, "train") == list_audio(free, "test") == []
    test_alerts = list_alert_recordings(out / "test/alerts", "test")
    assert [p.name for p in test_alerts["smoke_alarm"]] == ["someone+fake-sounds__beep__t0.5-1.5s.wav"]
    assert list_alert_recordings(out / "test/alerts", "train")["smoke_alarm"] == []


@pytest.mark.parametrize("change, message", [
    (lambda r: r[0].__setitem__(6, "0" * 64), "sha256 mismatch"),
    (lambda r: r[2].__setitem__(6, "1" * 64), "sha256 mismatch"),  # the zip member is what is pinned
    (lambda r: r[1].__setitem__(8, "2.5"), "lasts 2.000 s, the manifest says 2.5 s"),
    (lambda r: r[1].__setitem__(7, "test"), "roles are disjoint by source"),
    (lambda r: r[0].__setitem__(0, "noise"), "neither an alert label"),
    (lambda r: r[4].__setitem__(3, "abc123"), "full 40-hex commit"),
    (lambda r: r[4].__setitem__(3, "f" * 40), "holding commit"),
    (lambda r: r[3].__setitem__(3, "0.4"), "no wheel of fakepkg==0.4"),
    (lambda r: r[0].__setitem__(4, "usr/share/sounds/voice/gone.wav"), "no file usr/share/sounds/voice/gone.wav"),
    (lambda r: r[2].__setitem__(4, "usr/share/games/fake/public.zip#audio/x.wav"), "has no member audio/x.wav"),
    (lambda r: r[5].__setitem__(4, "alarms/beep.wav#t=1,9"), "ends after the recording"),
    (lambda r: r[0].__setitem__(7, "val"), "role 'val' is not one of train, dev, test"),
])
def test_a_wrong_row_is_one_line_naming_it(world, capsys, change, message):
    table = rows(world["commit"])
    change(table)
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("fetch_real_audio: error: ")


def test_roles_option_fetches_only_those(world):
    assert run(world, write(world["tmp"] / "m.tsv", rows(world["commit"])), "--roles", "test") == 0
    out = world["tmp"] / "out"
    assert not (out / "dev").exists() and not (out / "train").exists() and (out / "test").is_dir()


def test_fetching_some_roles_again_keeps_the_others_in_the_index_and_sources(world):
    manifest = write(world["tmp"] / "m.tsv", rows(world["commit"]))
    sources = world["tmp"] / "SOURCES.tsv"
    assert run(world, manifest) == 0
    index = world["tmp"] / "out" / "index.tsv"
    everything = index.read_text().splitlines()
    assert run(world, manifest, "--roles", "dev", "--skip-existing", "--sources-tsv", str(sources)) == 0
    assert sorted(index.read_text().splitlines()) == sorted(everything)
    assert {line.split("\t")[1] for line in everything[1:]} == {"dev", "train", "test"}
    assert len(sources.read_text().splitlines()) == 1 + len(rows(world["commit"]))


def test_a_damaged_file_of_a_role_not_fetched_is_one_line_naming_it(world, capsys):
    manifest = write(world["tmp"] / "m.tsv", rows(world["commit"]))
    assert run(world, manifest) == 0
    out = world["tmp"] / "out"
    (out / "index.tsv").unlink()  # its seconds must then come from the files themselves
    damaged = out / "train/alerts/siren/fakepkg__siren.wav"
    damaged.write_bytes(b"not audio")
    assert run(world, manifest, "--roles", "dev", "--skip-existing") != 0
    err = capsys.readouterr().err.strip()
    assert str(damaged) in err and "--roles train" in err and "\n" not in err


def test_shipped_manifest_is_well_formed_and_disjoint_by_source():
    table = real.read_manifest(*real.DEFAULT_MANIFESTS)
    assert table and all(r.note for r in table)
    roles = {r.role for r in table if not r.is_alert}
    assert roles == {"train", "dev", "test"}


def test_every_source_of_the_shipped_manifests_takes_one_role():
    # Train, dev and test are disjoint by source across both manifests, the first 21 alerts included: a package
    # heard in training may not also hold a development or test recording.
    listed = real.legacy_rows(real.legacy.DEFAULT_MANIFEST) + real.read_manifest(*real.DEFAULT_MANIFESTS)
    real.check_source_roles(listed)
    roles: dict[str, set[str]] = {}
    for r in listed:
        roles.setdefault(r.source, set()).add(r.role)
    assert all(len(found) == 1 for found in roles.values())


def test_sources_table_lists_every_recording_with_its_role():
    # models/SOURCES.tsv must list every real recording the project uses, with the split it serves.
    lines = (TOOLS.parent / "models" / "SOURCES.tsv").read_text().splitlines()[1:]
    published = {(s, v, p): split for s, v, p, *_, split in (line.split("\t") for line in lines)}
    listed = real.legacy_rows(real.legacy.DEFAULT_MANIFEST) + real.read_manifest(*real.DEFAULT_MANIFESTS)
    assert published == {(r.sources_name, r.version, r.path_inside): r.split for r in listed}


FX_PACKAGE, FX_VERSION = "hearalert-fake-effects", "0.5-2"
HORN = audio(420, 1.5, 22050)


def effects_world(world: dict) -> Path:
    """A second .deb in the cache, of sound effects, and a manifest adding one row of it (kind effects:game) to the
    rows of every source type."""
    folder = build_deb(world["tmp"] / "fx", FX_PACKAGE, FX_VERSION, {"usr/share/games/fx/sounds/horn.wav": HORN},
                       "game sounds")
    shutil.copy(next(folder.glob("*.deb")), world["cache"] / "debs" / "effects.deb")
    fx = ["effects:game", "deb", FX_PACKAGE, FX_VERSION, "usr/share/games/fx/sounds/horn.wav", "GPL-2.0-or-later",
          sha(HORN), "train", "1.5", "game sound effect; teacher top: Vehicle horn 0.90"]
    return write(world["tmp"] / "m.tsv", rows(world["commit"]) + [fx])


def test_effects_land_outside_the_alert_free_and_alert_folders_with_provenance(world):
    from hearalert_corpus.real_sets import RealSetError, list_role, list_unlabelled

    sources = world["tmp"] / "SOURCES.tsv"
    assert run(world, effects_world(world), "--sources-tsv", str(sources)) == 0
    out = world["tmp"] / "out"
    horn = out / "train/unlabelled/effects/hearalert-fake-effects__fx~sounds~horn.wav"
    info = sf.info(str(horn))
    assert (info.samplerate, info.channels, info.frames) == (16000, 1, 24000)
    # Listed like every recording: index.tsv and the SOURCES rows (used_for the kind, split train)...
    index = [line.split("\t") for line in (out / "index.tsv").read_text().splitlines()]
    assert [str(horn.relative_to(out)), "train", "effects:game", "deb", FX_PACKAGE, FX_VERSION,
            "usr/share/games/fx/sounds/horn.wav", "GPL-2.0-or-later", sha(HORN), "1.50"] in index
    assert [FX_PACKAGE, FX_VERSION, "usr/share/games/fx/sounds/horn.wav", "GPL-2.0-or-later", "effects:game",
            "train"] in [line.split("\t") for line in sources.read_text().splitlines()]
    # ...but no corpus split, alert-free list or alert list holds it: only list_unlabelled finds it.
    assert not (out / "train/unlabelled/splits.tsv").exists() and not (out / "train/alert_free").exists()
    with pytest.raises(RealSetError, match="no alert-free recordings"):  # train holds only the siren and the horn
        list_role(out / "train")
    assert [(r.relative, r.kind) for r in list_unlabelled(out / "train")] == [
        (str(horn.relative_to(out / "train")), "effects")]


@pytest.mark.parametrize("role", ["dev", "test"])
def test_effects_outside_the_train_role_are_one_line_naming_the_row(world, capsys, role):
    manifest = effects_world(world)
    lines = manifest.read_text().splitlines()
    manifest.write_text("\n".join(lines[:-1] + [lines[-1].replace("\ttrain\t", f"\t{role}\t")]) + "\n")
    assert run(world, manifest) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{manifest}:{len(lines)}: kind effects:game has no trusted label" in err
    assert f"role must be train, not {role}" in err and not (world["tmp"] / "out").exists()


def test_effects_of_a_source_in_another_role_are_refused(world, capsys):
    # The deb of the dev rows cannot give effects: one role per source, within the manifest...
    manifest = effects_world(world)
    lines = manifest.read_text().splitlines()
    fx = lines[-1].split("\t")
    fx[2:5] = [PACKAGE, VERSION, "usr/share/sounds/voice/hello.wav"]
    manifest.write_text("\n".join(lines[:-1] + ["\t".join(fx)]) + "\n")
    assert run(world, manifest) == 1
    assert "roles are disjoint by source" in capsys.readouterr().err
    # ...and across the two manifests (the first 21 alerts' sources keep their roles).
    def row(kind: str, role: str, line: str) -> real.Row:
        return real.Row(kind, "deb", "pkg", "1", f"{kind}.wav", "MIT", "0" * 64, role, 1.0, "n", line)
    with pytest.raises(real.FetchError, match=r"b:3: pkg is already in role test \(a:2\); .*an unlabelled recording"):
        real.check_source_roles([row("siren", "test", "a:2"), row("effects", "train", "b:3")])
    real.check_source_roles([row("siren", "train", "a:2"), row("effects", "train", "b:3")])


def test_a_source_in_two_roles_across_the_manifests_is_refused():
    # A first-21 alert row (a:2) and a main-manifest row (b:3) of one package: each manifest alone holds one role,
    # so only the check over both together can refuse the package being scored in test and heard in training.
    def row(kind: str, role: str, line: str) -> real.Row:
        return real.Row(kind, "deb", "pkg", "1", f"{kind}.wav", "MIT", "0" * 64, role, 1.0, "n", line)
    with pytest.raises(real.FetchError, match=r"b:3: pkg is already in role test \(a:2\); roles are disjoint"):
        real.check_source_roles([row("siren", "test", "a:2"), row("car_horn", "train", "b:3")])
    real.check_source_roles([row("siren", "test", "a:2"), row("car_horn", "test", "b:3")])


def test_a_recording_no_row_writes_any_more_is_removed_and_named(world, capsys):
    """make_real_set.py takes every audio file under a role's folders: a row removed from the manifest (or moved
    to another kind) must not leave its old file behind, while other roles and non-audio files stay."""
    table = rows(world["commit"])
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 0
    out = world["tmp"] / "out"
    siren = out / "train/alerts/siren/fakepkg__siren.wav"
    music = out / "dev/alert_free/music/hearalert-fake-audio__fake~music~theme.wav"
    assert siren.is_file() and music.is_file()
    kept_note = out / "dev/alert_free/music/notes.txt"
    kept_note.write_text("mine")
    capsys.readouterr()
    without_music = [r for r in table if r[0] != "music"]
    assert run(world, write(world["tmp"] / "m.tsv", without_music), "--skip-existing", "--roles", "dev") == 0
    said = capsys.readouterr().out
    assert not music.exists() and "removed 1 files" in said and music.relative_to(out).as_posix() in said
    assert siren.is_file(), "a role not fetched is left as it is"
    assert kept_note.read_text() == "mine"
    assert (out / "dev/alert_free/speech/hearalert-fake-audio__sounds~voice~hello.wav").is_file()


def test_several_manifest_files_are_one_manifest(world, capsys):
    """The shipped rows sit in two files (speech apart, to keep each small): read together, a source must still
    take one role and a file be written once across them."""
    table = rows(world["commit"])
    first, second = write(world["tmp"] / "a.tsv", table[:3]), write(world["tmp"] / "b.tsv", table[3:])
    assert [r.line for r in real.read_manifest(first, second)] == [f"{first}:{n}" for n in (2, 3, 4)] + \
        [f"{second}:{n}" for n in (2, 3, 4)]
    assert run(world, first, "--manifest", str(second)) == 0
    assert (world["tmp"] / "out" / "test/alerts/smoke_alarm/someone+fake-sounds__beep__t0.5-1.5s.wav").is_file()
    moved = [r[:7] + ["test"] + r[8:] for r in table[:1]]   # the dev package's speech row now says test
    third = write(world["tmp"] / "c.tsv", moved)
    capsys.readouterr()
    assert run(world, first, "--manifest", str(third)) != 0
    err = capsys.readouterr().err
    assert f"{third}:2" in err and "already in role dev" in err and f"{first}:2" in err


@pytest.mark.parametrize("pack", ["base/0snd.pk3", "base.wz"])
def test_a_member_of_a_game_data_pack_is_read_like_a_zip_member(world, pack):
    # Quake-engine .pk3 and Warzone 2100 .wz packs are zip archives: '#' names a member, not a time range.
    path = f"usr/share/games/fake/{pack}#audio/ambient/rain.wav"
    row = ["ambient:rain", "deb", PACKAGE, VERSION, path, "GPL-2.0-or-later", sha(RAIN), "dev", "1.25", "rain"]
    assert run(world, write(world["tmp"] / "m.tsv", [row])) == 0
    written = list((world["tmp"] / "out/dev/alert_free/ambient").glob("*.wav"))
    assert len(written) == 1 and "rain" in written[0].name
    assert sf.info(str(written[0])).frames == int(1.25 * 16000)


def test_a_failed_clone_names_gits_error_not_its_advice(tmp_path, monkeypatch):
    from hearalert_corpus import pinned

    # What git prints when a remote cannot be read: the error first, then two lines of advice.
    advice = ("fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access "
              "rights\nand the repository exists.\n")
    assert pinned.last_line(advice) == "fatal: Could not read from remote repository."
    assert pinned.last_line("warning: x\nsomething went wrong\n") == "something went wrong"
    monkeypatch.setattr(pinned, "GIT_URL", str(tmp_path / "nowhere" / "{repo}"))
    with pytest.raises(pinned.FetchError) as failed:
        pinned.find_repository("owner/name", "0" * 40, None, tmp_path / "cache", offline=False)
    message = str(failed.value)
    assert message.startswith("git clone of owner/name failed: fatal: ") and "\n" not in message


def test_a_mirrored_checkout_is_read_through_its_git_directory(world, tmp_path):
    from hearalert_corpus import pinned

    # The fetch tool leaves MIRROR/OWNER+NAME/repo/.git (a checkout's git directory), not a bare repo/.
    mirror = tmp_path / "checkouts"
    subprocess.run(["git", "clone", "-q", str(world["mirror"] / "someone+fake-sounds" / "repo"),
                    str(mirror / "someone+other" / "repo")], check=True)
    found = pinned.find_repository("someone/other", world["commit"], mirror, tmp_path / "cache", offline=True)
    assert found == mirror / "someone+other" / "repo" / ".git"
    assert pinned.read_git(found, world["commit"], list(GIT_FILES)) == GIT_FILES


def test_an_ogg_file_with_a_skeleton_track_is_written_without_it(world):
    # Wikimedia Commons' older Ogg uploads carry a Skeleton track that libsndfile refuses; the pinned hash is the
    # stored file's, what is written decodes (the whole alert as the same Ogg without the track, its excerpt as a
    # WAV).
    from test_ogg_skeleton import vorbis_ogg, with_skeleton

    plain, samples = vorbis_ogg(seconds=2.0)
    skeletal = with_skeleton(plain)
    commit = mirrored_repository(world["tmp"] / "skeleton", {"commons/siren.ogg": skeletal},
                                 world["mirror"] / "someone+commons")
    table = [["siren", "git", "someone/commons", commit, "commons/siren.ogg", "LicenseRef-PublicDomain",
              sha(skeletal), "train", "2.0", "a tone with a Skeleton track"],
             ["siren", "git", "someone/commons", commit, "commons/siren.ogg#t=0.5,1.5", "LicenseRef-PublicDomain",
              sha(skeletal), "train", "1.0", "its excerpt"]]
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 0
    alerts = world["tmp"] / "out/train/alerts/siren"
    whole = alerts / "someone+commons__siren.ogg"
    assert whole.read_bytes() == plain
    assert np.array_equal(sf.read(str(whole), dtype="float32")[0], samples)
    excerpt = [p for p in alerts.iterdir() if p != whole]
    assert len(excerpt) == 1 and sf.info(str(excerpt[0])).frames == 16000


def test_an_alert_stored_without_an_audio_suffix_is_written_where_the_sets_see_it(world):
    # A sample library may keep its sounds as bare names (TamTam's `Sounds/alarm`, a WAV): written under that name,
    # the file was fetched, counted and then left out of every set, since the sets list recordings by suffix.
    from hearalert_corpus.real_sets import list_role

    wav, ogg = audio(1000, 1.0, 16000), audio(600, 2.0, 44100, fmt="OGG")
    commit = mirrored_repository(world["tmp"] / "library", {"Sounds/alarm": wav, "Sounds/horn": ogg},
                                 world["mirror"] / "someone+library")
    table = [["alarm_clock", "git", "someone/library", commit, "Sounds/alarm", "GPL-2.0-or-later", sha(wav), "test",
              "1.0", "a WAV without a suffix"],
             ["car_horn", "git", "someone/library", commit, "Sounds/horn", "GPL-2.0-or-later", sha(ogg), "test",
              "2.0", "an Ogg Vorbis file without a suffix"],
             *[r for r in rows(world["commit"]) if r[7] == "test" and not r[0].startswith("smoke")]]
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 0
    role = world["tmp"] / "out/test"
    alarm = role / "alerts/alarm_clock/someone+library__alarm.wav"
    horn = role / "alerts/car_horn/someone+library__horn.wav"
    assert alarm.read_bytes() == wav  # already a WAV: the stored bytes
    # Another format: its decoder's 16-bit output, as an excerpt of it would be written.
    decoded, rate = sf.read(io.BytesIO(ogg), dtype="int16")
    written, written_rate = sf.read(str(horn), dtype="int16")
    assert (sf.info(str(horn)).format, written_rate) == ("WAV", rate) and np.array_equal(written, decoded)
    _, alerts = list_role(role)
    assert sorted(a.relative for a in alerts) == ["alerts/alarm_clock/someone+library__alarm.wav",
                                                   "alerts/car_horn/someone+library__horn.wav"]


def test_aac_recordings_are_pinned_as_stored_and_written_as_wav(world):
    # libsndfile does not decode AAC, which some sound collections ship only: the sha256 pins the stored bytes, and
    # what is written is the decoded audio as a WAV the sets and the 16-kHz conversion read.
    from hearalert_corpus.real_sets import list_role
    from test_aac import encoded, tone

    horn = encoded(np.stack([tone(420, 0.3), tone(420, 0.3)]), 22050, "adts")
    street = encoded(tone(150, 0.2)[None, :], 22050, "ipod")
    rain = encoded(tone(2000, 0.2)[None, :], 22050, "adts")
    commit = mirrored_repository(world["tmp"] / "aac", {"traffic/horn.aac": horn, "traffic/street.m4a": street,
                                                        "weather.zip": zip_bytes({"rain.aac": rain})},
                                 world["mirror"] / "someone+aac")
    table = [["car_horn", "git", "someone/aac", commit, "traffic/horn.aac", "CC0-1.0", sha(horn), "test", "1.579",
              "an AAC horn"],
             ["ambient:street", "git", "someone/aac", commit, "traffic/street.m4a", "CC0-1.0", sha(street), "test",
              "1.579", "an AAC street"],
             ["ambient:rain", "git", "someone/aac", commit, "weather.zip#rain.aac", "CC0-1.0", sha(rain), "test",
              "1.579", "an AAC member of a zip archive"]]
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 0
    role = world["tmp"] / "out/test"
    alert = role / "alerts/car_horn/someone+aac__horn.aac.wav"
    info = sf.info(str(alert))
    assert (info.format, info.samplerate, info.channels) == ("WAV", 22050, 2)
    free = role / "alert_free/ambient/someone+aac__traffic~street.m4a.wav"
    samples, rate = sf.read(str(free))
    assert rate == 16000 and samples.ndim == 1 and abs(np.argmax(np.abs(np.fft.rfft(samples))) * rate / len(samples)
                                                         - 150) < 2
    rain_written, _ = sf.read(str(role / "alert_free/ambient/someone+aac__weather.zip~rain.aac.wav"))
    assert abs(np.argmax(np.abs(np.fft.rfft(rain_written))) * 16000 / len(rain_written) - 2000) < 2
    _, alerts = list_role(role)
    assert [a.relative for a in alerts] == ["alerts/car_horn/someone+aac__horn.aac.wav"]


def test_an_mp3_that_begins_with_an_empty_id3_tag_is_read_as_later_steps_read_it(world, capsys):
    # libsndfile recognises such a file from a path (by its suffix) but not from memory, where fetch first reads it:
    # openHAB's BigSoundBank phone ring was refused as "Format not recognised" although every set reads it.
    buf = io.BytesIO()
    t = np.arange(48000) / 48000
    sf.write(buf, (0.3 * np.sin(2 * np.pi * 773 * t)).astype(np.float32), 48000, format="MP3")
    ring = b"ID3\x03\x00\x00\x00\x00\x00\x00" + buf.getvalue()  # an ID3v2.3 header declaring no frames
    with pytest.raises(sf.LibsndfileError):
        sf.info(io.BytesIO(ring))  # the quirk this test is about, as libsndfile has it
    broken = b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"no MPEG frames here" * 40
    commit = mirrored_repository(world["tmp"] / "mp3", {"sounds/ring.mp3": ring, "sounds/street.mp3": ring,
                                                        "sounds/broken.mp3": broken},
                                 world["mirror"] / "someone+mp3")
    table = [["phone_ring", "git", "someone/mp3", commit, "sounds/ring.mp3", "CC0-1.0", sha(ring), "test", "1.0",
              "an MP3 behind an empty ID3 tag"],
             ["ambient:street", "git", "someone/mp3", commit, "sounds/street.mp3", "CC0-1.0", sha(ring), "test",
              "1.0", "the same as alert-free audio"]]
    assert run(world, write(world["tmp"] / "m.tsv", table)) == 0
    role = world["tmp"] / "out/test"
    alert = role / "alerts/phone_ring/someone+mp3__ring.mp3"
    assert alert.read_bytes() == ring  # written as stored, read by path from then on
    samples, rate = sf.read(str(role / "alert_free/ambient/someone+mp3__sounds~street.wav"))
    assert rate == 16000 and abs(np.argmax(np.abs(np.fft.rfft(samples))) * rate / len(samples) - 773) < 2
    # An MP3 that no reader can decode is still refused, naming its row.
    table = [["phone_ring", "git", "someone/mp3", commit, "sounds/broken.mp3", "CC0-1.0", sha(broken), "test", "1.0",
              "not audio"]]
    assert run(world, write(world["tmp"] / "bad.tsv", table)) != 0
    err = capsys.readouterr().err
    assert "sounds/broken.mp3: soundfile cannot read it" in err
    assert "BytesIO" not in err  # libsndfile's words, not the object it read from
    assert err.rstrip().endswith("sounds/broken.mp3: soundfile cannot read it (Format not recognised.)")
