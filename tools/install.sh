#!/usr/bin/env bash
# Installs hearalert and its bundled model where `hearalert` finds the model from any folder:
#   PREFIX/bin/hearalert
#   PREFIX/share/hearalert/default.safetensors   (with noise.safetensors, MODEL_CARD.md and the SOURCES tables beside it)
# The executable looks for the model beside its own real path (symbolic links resolved), so a link to
# PREFIX/bin/hearalert from anywhere on PATH works too.
#
# Usage: tools/install.sh --prefix PREFIX [--binary FILE]
#   --prefix PREFIX  where to install, e.g. /usr/local or ~/.local (required)
#   --binary FILE    install this hearalert executable instead of building one with `swift build -c release`
set -euo pipefail

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-64}"; }

prefix=""
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || usage; prefix="$2"; shift 2 ;;
        --binary) [ $# -ge 2 ] || usage; binary="$2"; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "install: unknown argument '$1'" >&2; usage ;;
    esac
done
[ -n "$prefix" ] || { echo "install: --prefix is required" >&2; usage; }

checkout="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "$binary" ]; then
    echo "install: building hearalert (release)" >&2
    (cd "$checkout" && swift build -c release --product hearalert >&2)
    binary="$(cd "$checkout" && swift build -c release --show-bin-path)/hearalert"
fi
[ -f "$binary" ] && [ -x "$binary" ] || { echo "install: $binary is not an executable file" >&2; exit 1; }

# install(1) removes a file it replaces before copying, so a hearalert that is running keeps its executable.
install -d "$prefix/bin" "$prefix/share/hearalert"
install -m 755 "$binary" "$prefix/bin/hearalert"
install -m 644 "$checkout/models/default.safetensors" "$checkout/models/noise.safetensors" \
    "$checkout/models/MODEL_CARD.md" "$checkout/models/SOURCES.tsv" "$checkout/models/ENHANCEMENT_SOURCES.tsv" \
    "$prefix/share/hearalert/"
echo "install: $prefix/bin/hearalert and its model in $prefix/share/hearalert/" >&2
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "install: add $prefix/bin to PATH to run hearalert by name" >&2 ;;
esac
