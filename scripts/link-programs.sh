#!/usr/bin/env bash
# Puts scabench's commands on PATH: links `scabench` (the venv's) and the
# programs a user runs by name (build/programs.txt, written by CMakeLists.txt
# from the list it installs: scabench-host, scabench-launch, ...) into
# $SCABENCH_INSTALL_BIN, else /usr/local/bin. Idempotent; scripts/setup.sh
# runs it once the build and the venv exist.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_DIR=${SCABENCH_INSTALL_BIN:-/usr/local/bin}
if [ ! -w "$BIN_DIR" ]; then
  echo "setup: $BIN_DIR is not writable; use $PWD/.venv/bin/scabench and the programs in $PWD/build/bin"
  exit 0
fi
ln -sf "$PWD/.venv/bin/scabench" "$BIN_DIR/scabench"
while read -r program; do
  ln -sf "$PWD/build/bin/$program" "$BIN_DIR/$program"
done < build/programs.txt
