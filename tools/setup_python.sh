#!/usr/bin/env bash
# setup_python.sh - the optional Python peers that some tests and tools
# compare against: Debian's python3-torch and python3-torchvision (the
# PyTorch converter's and the PyTorch comparisons' tests), installed with
# apt where root or sudo allows, and in .venv/ (git-ignored) onnxruntime
# (ONNX export), tensorboard (its event-file reader) and scikit-learn
# (regression baseline). The venv sees the system's packages, so Debian's
# python3-torch stays importable; numpy is held below 2 for that torch.
# None of this is a dependency of the library: a test whose module is
# missing skips.
# Best effort: without network access it says so and exits 0.
#
#   tools/setup_python.sh        create or update .venv/
set -uo pipefail
cd "$(dirname "$0")/.."

if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null && command -v apt-get >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  if [ -z "$sudo" ] || command -v sudo >/dev/null; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      python3-torch python3-torchvision >/dev/null ||
      echo "setup_python: could not install python3-torch and python3-torchvision; tests that need them will skip"
  fi
fi
if [ ! -x .venv/bin/python ]; then
  if ! /usr/bin/python3 -m venv --system-site-packages .venv; then
    echo "setup_python: cannot create .venv (install python3-venv); tests that need it will skip"
    exit 0
  fi
fi
if ! .venv/bin/python -m pip install -q --disable-pip-version-check \
    "numpy<2" onnxruntime tensorboard scikit-learn; then
  echo "setup_python: pip install failed; tests that need onnxruntime, tensorboard or scikit-learn will skip"
fi
exit 0
