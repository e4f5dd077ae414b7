#!/usr/bin/env bash
# setup.sh - installs what cltrain needs on Debian 12 (or Ubuntu) and
# configures and builds it in build/. Idempotent: with everything present it
# installs nothing and only brings the build up to date.
#
#   tools/setup.sh            packages + configure + build (release)
#   BUILD_DIR=dir tools/setup.sh
#   SETUP_NO_BUILD=1 tools/setup.sh   packages only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential pkg-config meson ninja-build python3
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd mesa-opencl-icd clinfo
  libclblast-dev libopenblas-dev zlib1g-dev libcjson-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libpng-dev libjpeg62-turbo-dev python3-venv
  openmpi-bin libopenmpi-dev
  dataset-fashion-mnist
  fortunes fortunes-de fortunes-es fortunes-it fortunes-br fortunes-pl fortunes-cs fortunes-ru
  oclgrind
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${SETUP_NO_BUILD:-0}" = 1 ] && exit 0
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --buildtype=release
fi
ninja -C "$build"
