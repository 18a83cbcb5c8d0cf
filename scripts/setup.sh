#!/usr/bin/env bash
# Installs what scabench needs on a fresh Debian bookworm machine, builds the
# C++ runtime and the Python package, and puts `scabench` and the programs
# (scabench-host, scabench-launch, ...) on PATH.
# Idempotent: a second run only checks.
#
#   scripts/setup.sh           everything scabench needs, ZeroMQ for `scabench peers` included
#   scripts/setup.sh --peers   and GNU Radio's development packages, for its GNU Radio peer
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_PEERS=0
for arg in "$@"; do
  case "$arg" in
    --peers) WITH_PEERS=1 ;;
    *) echo "setup: unknown option $arg; valid: --peers" >&2; exit 2 ;;
  esac
done

# A build folder copied with its checkout still names the original's files
# (CMakeLists.txt, "install"): its programs would load the original's runtime
# and its install copy the original's build. One configured here is needed;
# said before anything is installed.
if [ -f build/CMakeCache.txt ]; then
  configured=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' build/CMakeCache.txt)
  if [ "$(realpath -m "$configured")" != "$(realpath -m build)" ]; then
    echo "setup: build/ was configured in $configured and copied here; remove it (rm -rf build) and run setup again" >&2
    exit 2
  fi
fi

# libzmq3-dev, cppzmq-dev: ZeroMQ, a few hundred kB, for the ZeroMQ peer. graphviz: `dot`, which lays
# out a run report's waveform drawing.
DEBIAN_PACKAGES=(build-essential cmake ninja-build pkg-config libomniorb4-dev omniidl omniorb omniorb-idl
                 libgtest-dev nlohmann-json3-dev python3-venv omniorb-nameserver
                 libliquid-dev libfec-dev libfftw3-dev iproute2 libzmq3-dev cppzmq-dev clang-format graphviz)
# GNU Radio is some 190 packages without its recommendations (GUI, SDR
# drivers), which the peer does not need: only with --peers, and without them.
PEER_PACKAGES=(gnuradio-dev)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
apt_install() {  # apt_install [apt options] PACKAGE...
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi
if ((WITH_PEERS)); then
  missing=()
  for pkg in "${PEER_PACKAGES[@]}"; do
    installed "$pkg" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]} (the GNU Radio peer)"
    apt_install --no-install-recommends "${missing[@]}"
  fi
fi

# C++: configure once, then incremental builds. Two jobs: the machine has 2 cores.
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# A peer program is built only where its library was found when the build
# was configured (CMakeLists.txt): configure again once one has come since.
if { installed cppzmq-dev && ! grep -q scabench-peer-zmq build/build.ninja; } ||
   { installed gnuradio-dev && ! grep -q scabench-peer-gnuradio build/build.ninja; }; then
  cmake -S . -B build >/dev/null
fi
cmake --build build -j 2

# Python: a venv of our own, so the system interpreter is left alone. It
# holds omniORBpy too (salome-omniorb, a dependency in python/pyproject.toml:
# Debian bookworm has no omniORBpy package) and the console scripts
# (`scabench`, `scabench-py-stage`).
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import scabench, numpy, scipy, click, rich, pytest, hypothesis, matplotlib, markdown, omniORB, lxml, tomli_w, graphviz, setuptools, wheel, mkdocs, material, mkdocstrings_handlers.python, ruff, mypy" \
     2>/dev/null || [ ! -x .venv/bin/scabench-py-stage ] || [ ! -x .venv/bin/mkdocs ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e 'python[test]'
fi
# The omniORBpy stubs of idl/ (generated into build/python-idl/, keyed by the
# IDL's text, so this is a check once they exist); it also proves that
# omniORBpy's C extension loads in this interpreter.
.venv/bin/python -c "from scabench.components import idl; idl.load()"

# The link emulator for network hosts (python/scabench/network.py), built
# from the Go module proxy at a fixed release into .tools/bin. Go comes with
# this kind of machine; Debian's golang-go stands in where it does not.
TOXIPROXY_VERSION=v2.5.0
TOXIPROXY=.tools/bin/toxiproxy-server
if [ ! -x "$TOXIPROXY" ] || ! grep -q "$TOXIPROXY_VERSION" .tools/toxiproxy.version 2>/dev/null; then
  GO=$(command -v go || true)
  [ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
  if [ -z "$GO" ]; then
    echo "setup: installing golang-go (for the link emulator)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go >/dev/null
    GO=$(command -v go)
  fi
  mkdir -p .tools/bin
  echo "setup: building the link emulator (toxiproxy $TOXIPROXY_VERSION)"
  if GOBIN="$PWD/.tools/go-bin" "$GO" install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"; then
    mv .tools/go-bin/server "$TOXIPROXY"
    echo "$TOXIPROXY_VERSION" > .tools/toxiproxy.version
  else
    echo "setup: WARNING: could not build the link emulator; network-host runs and their tests will say so and skip"
  fi
fi

# `scabench` and the programs (scabench-host, ...) on PATH.
scripts/link-programs.sh
echo "setup: done"
