#!/usr/bin/env bash
# gpu_bundle.sh BUILD_DIR OUTDIR: a directory that runs cltrain on another
# x86-64 Linux machine with no packages installed (a GPU machine), made from
# a meson build here:
#
#   OUTDIR/bin/cltrain            the CLI (and checkcl, bench_conv_gpu and
#                                 test_gemm_cl when built)
#   OUTDIR/lib/                   every shared library they load except
#                                 glibc's own: libcltrain, the OpenCL ICD
#                                 loader, CLBlast, OpenBLAS, zlib, cJSON, ...
#   OUTDIR/data/fashion-mnist/    the dataset, when installed here
#   OUTDIR/gpu_report.sh          the report (run it there: OUTDIR/gpu_report.sh)
#   OUTDIR/bench_peer.py          the PyTorch side of the seed benchmark
#   OUTDIR/pytorch_gpt.py         the zoo gpt in PyTorch (bench_peer.py imports it)
#   OUTDIR/bench_tinygrad.py      tinygrad beside cltrain on the same OpenCL device
#   OUTDIR/python/tinygrad/       tinygrad (pure Python), when it imports here
#                                 (in TINYGRAD_PYTHON, else .venv's python3,
#                                 else python3)
#   OUTDIR/BUNDLE.txt             what was bundled, from where, and the glibc
#                                 the libraries need at least
#
# No OpenCL driver travels: the report finds the GPU vendor's on the machine.
# FASHION_MNIST_DIR overrides where the dataset is looked for.
set -euo pipefail

usage() {
    echo "usage: $0 BUILD_DIR OUTDIR   (BUILD_DIR: a meson build directory with tools/cltrain)" >&2
    exit 2
}
[ $# -eq 2 ] || usage
build=$1
out=$2
tools=$(cd "$(dirname "$0")" && pwd)
cltrain=$build/tools/cltrain
[ -x "$cltrain" ] || { echo "gpu_bundle: $cltrain is missing: build first (meson compile -C $build)" >&2; exit 1; }
command -v ldd >/dev/null || { echo "gpu_bundle: ldd is needed" >&2; exit 1; }

mkdir -p "$out/bin" "$out/lib"
bins=("$cltrain")
for t in checkcl bench_conv_gpu test_gemm_cl; do
    [ -x "$build/tests/$t" ] && bins+=("$build/tests/$t")
done

# every library each binary loads, under the name the loader asks for; glibc
# (and the dynamic loader) stay the target's own
for b in "${bins[@]}"; do
    cp -L "$b" "$out/bin/"
    if ldd "$b" | grep -q 'not found'; then
        echo "gpu_bundle: $b has unresolved libraries:" >&2
        ldd "$b" | grep 'not found' >&2
        exit 1
    fi
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
        case $name in
        libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | \
            libutil.so.* | ld-linux*) ;;
        *) cp -L "$path" "$out/lib/$name" ;;
        esac
    done
done
# the ICD loader opens the vendor's driver; it must be the bundled one
[ -e "$out/lib/libOpenCL.so.1" ] || { echo "gpu_bundle: cltrain does not load libOpenCL.so.1?" >&2; exit 1; }

data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
have_data=no
if [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ]; then
    mkdir -p "$out/data/fashion-mnist"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
        for g in "$data/$f" "$data/$f.gz"; do
            [ -e "$g" ] && cp -L "$g" "$out/data/fashion-mnist/"
        done
    done
    have_data=yes
fi

cp "$tools/gpu_report.sh" "$tools/bench_peer.py" "$tools/pytorch_gpt.py" "$tools/bench_tinygrad.py" "$out/"

# tinygrad, the OpenCL peer: its package directory as it is installed here
tg_version=no
for py in ${TINYGRAD_PYTHON:-"$tools/../.venv/bin/python3" python3}; do
    tg_dir=$("$py" -c 'import os, tinygrad; print(os.path.dirname(tinygrad.__file__))' 2>/dev/null) || continue
    [ -n "$tg_dir" ] || continue
    rm -rf "$out/python/tinygrad"
    mkdir -p "$out/python"
    rm -rf "$out"/python/tinygrad-*.dist-info
    (cd "$(dirname "$tg_dir")" && tar cf - --exclude=__pycache__ tinygrad tinygrad-*.dist-info) |
        tar xf - -C "$out/python"
    tg_version=$("$py" -c 'from importlib.metadata import version; print(version("tinygrad"))' 2>/dev/null ||
        echo unknown)
    break
done
chmod +x "$out/gpu_report.sh"

# the newest GLIBC_x.y any bundled file needs: the target's glibc must be as new
need_glibc=$(for f in "$out"/bin/* "$out"/lib/*; do
    objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' || true
done | sort -uV | tail -n1)
{
    echo "bundled: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm)"
    echo "source: $(git -C "$tools/.." describe --always --dirty 2>/dev/null || echo unknown)"
    echo "build: $build"
    echo "glibc here: $(ldd --version 2>/dev/null | head -n1)"
    echo "glibc needed at least: ${need_glibc:-unknown}"
    if command -v dpkg-query >/dev/null; then
        echo "packages: $(dpkg-query -W -f '${Package} ${Version}, ' libclblast1 ocl-icd-libopencl1 \
            libopenblas0-pthread 2>/dev/null | sed 's/, $//')"
    fi
    echo "fashion-mnist: $have_data"
    echo "tinygrad: $tg_version"
    echo "binaries: $(cd "$out/bin" && echo *)"
    echo "libraries: $(cd "$out/lib" && echo *)"
} >"$out/BUNDLE.txt"
cat "$out/BUNDLE.txt"
du -sh "$out"
