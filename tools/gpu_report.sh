#!/usr/bin/env bash
# gpu_report.sh [BUNDLE_DIR]: everything cltrain can say about a GPU machine,
# in one markdown report.
#
# BUNDLE_DIR is what tools/gpu_bundle.sh made (default: the directory this
# script is in), or a meson build directory of this repository. The script
#
#   1. finds the GPU vendor's OpenCL driver (NVIDIA libnvidia-opencl.so*,
#      AMD ROCm libamdocl64.so, Intel libigdrcl.so); when /etc/OpenCL/vendors
#      (or $OCL_ICD_VENDORS) does not name it, it writes an ICD file for it
#      into a temporary directory (beside copies of those already there) and
#      points the ICD loader at that directory with OCL_ICD_VENDORS;
#   2. runs `cltrain --devices --json`, `cltrain doctor`, `cltrain selftest`, `cltrain bench
#      --profile --json` for each of the seven seed networks, and one epoch
#      of the default CNN on Fashion-MNIST, on the best GPU; with no GPU
#      device, on the CPU device instead (the report says so at the top);
#   3. when python3 has a PyTorch that sees a GPU (CUDA or ROCm), times the
#      same seven networks there with TF32 off (bench_peer.py --device cuda);
#   3b. with TUNE=yes (the default), runs `cltrain tune` for the networks on
#      the device (the benches of 2. run untuned, CLTRAIN_TUNE=off) and
#      times them again tuned, side by side in the report;
#   3c. with TINYGRAD=yes (the default), when tinygrad imports (the bundle
#      carries it where the bundling machine had it), times mlp, cnn and
#      resnet56 in tinygrad and cltrain's GPU class on the same OpenCL
#      device, interleaved (bench_tinygrad.py --platform nvidia|amd|intel);
#   4. runs checkcl (every op against its host reference on random shapes,
#      finite-difference gradients included), bench_conv_gpu (the GPU
#      class's convolution variants) and test_gemm_cl (cltrain's own SGEMM
#      tiles checked against a double-precision product, then timed beside
#      CLBlast on the networks' shapes) if bundled;
#   5. writes the report, and every command's output beside it.
#
# Nothing is fatal: a missing driver, device, dataset or PyTorch, or a
# command that fails, is written into the report as the finding.
#
# Environment:
#   OUT=FILE.md     the report (default ./gpu-report-HOST-DATE.md; the logs
#                   go to FILE.logs/)
#   DEVICE=SEL      the cltrain device selector (default: gpu, else cpu)
#   MODELS="..."    networks (default: the seven seed networks)
#   STEPS=N WARMUP=N  timed and untimed steps per network (default 10 and 3
#                   on a GPU, 2 and 1 on the CPU fallback)
#   EPOCHS=N LIMIT=N  training epochs (default 1) and samples (default: all)
#   TIMEOUT=S       the longest any one command may run (default 1800)
#   PYTHON=PATH     the python with PyTorch (default python3)
#   OPENCL_DRIVER=PATH  a vendor OpenCL driver library somewhere unusual
#                   (registered like the ones found)
#   CONV_ARGS="..." extra arguments of bench_conv_gpu (e.g. "--batch 64")
#   TUNE=yes|no     tune the networks' products and time them again (default yes)
#   TUNE_BUDGET=S   tune's budget per network in seconds (default 60)
#   TINYGRAD=yes|no time tinygrad beside cltrain (default yes)
#   TG_ROUNDS=N     its rounds (default 3)
#   TG_MODELS=a,b   its networks (default mlp,cnn,resnet56)
set -uo pipefail

usage() {
    echo "usage: $0 [BUNDLE_DIR]   (see the comment at the top of this script)" >&2
    exit 2
}
[ $# -le 1 ] || usage
case ${1:-} in -h | --help) usage ;; esac

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here}" 2>/dev/null && pwd) || { echo "gpu_report: no directory ${1:-}" >&2; exit 2; }
if [ -x "$src/bin/cltrain" ]; then # a bundle
    cltrain=$src/bin/cltrain
    libdir=$src/lib
    convbench=$src/bin/bench_conv_gpu
    checkcl=$src/bin/checkcl
    gemmcl=$src/bin/test_gemm_cl
    peer=$src/bench_peer.py
    tgbench=$src/bench_tinygrad.py
    tgpath=$src/python
    data=${FASHION_MNIST_DIR:-$src/data/fashion-mnist}
elif [ -x "$src/tools/cltrain" ]; then # a meson build directory
    cltrain=$src/tools/cltrain
    libdir=
    convbench=$src/tests/bench_conv_gpu
    checkcl=$src/tests/checkcl
    gemmcl=$src/tests/test_gemm_cl
    peer=$here/bench_peer.py
    tgbench=$here/bench_tinygrad.py
    tgpath=
    data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
else
    echo "gpu_report: $src holds neither bin/cltrain (a bundle) nor tools/cltrain (a build)" >&2
    exit 2
fi

host=$(hostname 2>/dev/null || echo host)
OUT=${OUT:-$PWD/gpu-report-$host-$(date -u +%Y%m%d-%H%M).md}
logs=${OUT%.md}.logs
mkdir -p "$logs" || exit 1
rm -f "$logs"/*.out "$logs"/*.err "$logs"/*.rc "$logs"/train.jsonl # a previous run's
echo "(gpu_report.sh is running; the report is written at its end)" >"$OUT" || exit 1
MODELS=${MODELS:-fcn-s alexnet-s resnet50 fcn-r alexnet-r resnet56 lstm gpt}
EPOCHS=${EPOCHS:-1}
LIMIT=${LIMIT:-}
TIMEOUT=${TIMEOUT:-1800}
PYTHON=${PYTHON:-python3}
CONV_ARGS=${CONV_ARGS:-}
notes=() # findings for the top of the report

say() { echo "gpu_report: $*" >&2; }
md() { printf '%s\n' "$@" >>"$OUT"; }

# run NAME CMD...: CMD's stdout and stderr into $logs/NAME.out/.err, its
# status into $logs/NAME.rc and as the return value
run() {
    local name=$1 rc
    shift
    say "$name: $*"
    if command -v timeout >/dev/null; then
        timeout --kill-after=30 "$TIMEOUT" "$@" >"$logs/$name.out" 2>"$logs/$name.err"
    else
        "$@" >"$logs/$name.out" 2>"$logs/$name.err"
    fi
    rc=$?
    echo "$rc" >"$logs/$name.rc"
    [ "$rc" = 124 ] && echo "(stopped after ${TIMEOUT} s)" >>"$logs/$name.err"
    return "$rc"
}

# the last lines of a command's stderr, as a quoted block
err_tail() {
    md '```' "$(tail -n "${2:-8}" "$logs/$1.err" 2>/dev/null | cut -c1-1000)" '```'
}

# json_get KEY < JSON: the first value of "KEY" (a number, or a string unquoted)
json_get() {
    awk -v k="\"$1\": " '{
        i = index($0, k)
        if (!i) next
        s = substr($0, i + length(k))
        if (s ~ /^"/) { s = substr(s, 2); sub(/".*/, "", s) } else sub(/[,}\] ].*/, "", s)
        print s
        exit
    }'
}

# ---- the machine ----
os=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n1)
ncpu=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>/dev/null | head -n1)

gpus=""
if command -v nvidia-smi >/dev/null; then
    gpus=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
        sed 's/^/NVIDIA (nvidia-smi): /')
fi
if command -v rocm-smi >/dev/null; then
    gpus="$gpus${gpus:+$'\n'}$(rocm-smi --showproductname 2>/dev/null | grep -i 'card series' | sed 's/^/AMD (rocm-smi): /')"
fi
for v in /sys/class/drm/card*/device/vendor; do
    case $v in */card*-*/*) continue ;; esac # connectors, not cards
    [ -e "$v" ] || continue
    case $(cat "$v") in
    0x10de) gpus="$gpus${gpus:+$'\n'}PCI display device ${v%/device/vendor}: NVIDIA" ;;
    0x1002) gpus="$gpus${gpus:+$'\n'}PCI display device ${v%/device/vendor}: AMD" ;;
    0x8086) gpus="$gpus${gpus:+$'\n'}PCI display device ${v%/device/vendor}: Intel" ;;
    esac
done
nodes=""
for n in /dev/nvidia[0-9]* /dev/kfd /dev/dri/renderD*; do
    [ -e "$n" ] && nodes="$nodes${nodes:+ }$n"
done

# ---- the OpenCL drivers ----
# find_driver STEM DIR...: the driver library STEM.so* in the first directory
# that has it (the .so.1 / plain .so name where there is one)
find_driver() {
    local stem=$1 d f
    shift
    for d in "$@"; do
        for f in "$d/$stem.so.1" "$d/$stem.so" "$d/$stem".so.*; do
            [ -e "$f" ] && { echo "$f"; return 0; }
        done
    done
    return 1
}
libdirs=(/usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /lib/x86_64-linux-gnu /lib64 /usr/local/lib)
nv=$(find_driver libnvidia-opencl /usr/local/nvidia/lib64 /usr/local/nvidia/lib "${libdirs[@]}" \
    /usr/lib/wsl/lib /usr/local/cuda/compat)
amd=$(find_driver libamdocl64 /opt/rocm/lib /opt/rocm/opencl/lib /opt/rocm/lib64 /opt/rocm-*/lib \
    /opt/rocm-*/opencl/lib "${libdirs[@]}")
intel=$(find_driver libigdrcl /usr/lib/x86_64-linux-gnu/intel-opencl /usr/local/lib/intel-opencl \
    /usr/lib64/intel-opencl /opt/intel/opencl "${libdirs[@]}")
if [ -z "$nv$amd$intel${OPENCL_DRIVER:-}" ] && command -v find >/dev/null; then
    # anywhere else under the usual roots (separate mounts included)
    say "no OpenCL GPU driver in the usual places; searching /usr /opt /lib /lib64"
    to=()
    command -v timeout >/dev/null && to=(timeout 120)
    found=$("${to[@]}" find /usr /opt /lib /lib64 \( -name 'libnvidia-opencl.so*' -o \
        -name 'libamdocl64.so' -o -name 'libigdrcl.so' \) 2>/dev/null)
    nv=$(grep -m1 libnvidia-opencl <<<"$found")
    amd=$(grep -m1 libamdocl64 <<<"$found")
    intel=$(grep -m1 libigdrcl <<<"$found")
fi

extra=${OPENCL_DRIVER:-}
# the ICD files the loader reads (ocl-icd: $OCL_ICD_VENDORS, else /etc/OpenCL/vendors)
icd_dir=/etc/OpenCL/vendors
[ -d "${OCL_ICD_VENDORS:-}" ] && icd_dir=$OCL_ICD_VENDORS
registered=$(cat "$icd_dir"/*.icd 2>/dev/null)
icd_note="$icd_dir:"
for f in "$icd_dir"/*.icd; do
    [ -e "$f" ] && icd_note="$icd_note $(basename "$f") ($(head -n1 "$f"))"
done
[ -d "$icd_dir" ] || icd_note="$icd_dir does not exist"
vendors=""
drivers=""
ldpath=${libdir}
for pair in "nvidia:$nv" "amd:$amd" "intel:$intel" "extra:$extra"; do
    name=${pair%%:*} lib=${pair#*:}
    [ -n "$lib" ] || continue
    drivers="$drivers${drivers:+, }$name $lib"
    ldpath="$ldpath${ldpath:+:}$(dirname "$lib")" # its own dependencies live beside it
    stem=$(basename "$lib")
    stem=${stem%%.so*}
    if grep -q "$stem" <<<"$registered"; then
        continue
    fi
    if [ -z "$vendors" ]; then
        vendors=$(mktemp -d "${TMPDIR:-/tmp}/cltrain-icd.XXXXXX")
        cp "$icd_dir"/*.icd "$vendors/" 2>/dev/null
    fi
    echo "$lib" >"$vendors/cltrain-$name.icd"
    icd_note="$icd_note; no ICD names $stem, so $vendors/cltrain-$name.icd does (OCL_ICD_VENDORS=$vendors)"
done
[ -n "$vendors" ] && export OCL_ICD_VENDORS=$vendors
[ -n "$ldpath" ] && export LD_LIBRARY_PATH="$ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "$drivers" ]; then
    if [ -n "$gpus" ]; then
        notes+=("**No OpenCL driver for the GPU was found** (no libnvidia-opencl.so*, libamdocl64.so or libigdrcl.so): this machine's GPU is not reachable through OpenCL.")
    else
        notes+=("No GPU and no OpenCL GPU driver were found on this machine.")
    fi
fi

# ---- cltrain's devices ----
dev_rc=0
if ! run version "$cltrain" --version; then
    need=$(sed -n 's/^glibc needed at least: //p' "$src/BUNDLE.txt" 2>/dev/null)
    notes+=("**cltrain does not start here** (this machine: $glibc${need:+; the bundle needs $need}); its message is below.")
    dev_rc=1
else
    run devices-json "$cltrain" --devices --json || dev_rc=$?
    run devices "$cltrain" --devices
    run doctor "$cltrain" doctor ${DEVICE:+--device "$DEVICE"}
    if [ "$dev_rc" != 0 ]; then
        notes+=("**\`cltrain --devices\` failed** (exit $dev_rc): no OpenCL device is usable; its messages are below.")
        # why the ICD loader did not load a driver
        [ -n "$drivers" ] && OCL_ICD_DEBUG=7 run devices-debug "$cltrain" --devices
    fi
fi
have_gpu=no
grep -q '"type": "gpu"' "$logs/devices-json.out" 2>/dev/null && have_gpu=yes
have_cpu=no
grep -q '"type": "cpu"' "$logs/devices-json.out" 2>/dev/null && have_cpu=yes
dev=${DEVICE:-}
cpu_fallback=no
if [ -z "$dev" ]; then
    if [ $have_gpu = yes ]; then
        dev=gpu
    elif [ $have_cpu = yes ]; then
        dev=cpu
        cpu_fallback=yes
        notes+=("**No GPU OpenCL device: every cltrain figure below was measured on the CPU device**, not a GPU (a fallback that shows the flow works; compare none of it with GPU figures).")
    elif [ "$dev_rc" = 0 ]; then
        notes+=("cltrain found no OpenCL device at all.")
    fi
fi
if [ $have_gpu = yes ] && [ $cpu_fallback = no ]; then
    STEPS=${STEPS:-10}
    WARMUP=${WARMUP:-3}
else
    STEPS=${STEPS:-2}
    WARMUP=${WARMUP:-1}
fi

# ---- cltrain's runs ----
if [ -n "$dev" ]; then
    run selftest "$cltrain" selftest --device "$dev"
    for m in $MODELS; do
        run "bench-$m" env CLTRAIN_TUNE=off "$cltrain" bench --model "$m" --device "$dev" --steps "$STEPS" \
            --warmup "$WARMUP" --profile --json
    done
    if [ "${TUNE:-yes}" = yes ]; then
        targs=()
        for m in $MODELS; do targs+=(--model "$m"); done
        run tune "$cltrain" tune --device "$dev" --budget "${TUNE_BUDGET:-60}" "${targs[@]}" --json
        for m in $MODELS; do
            run "tuned-$m" "$cltrain" bench --model "$m" --device "$dev" --steps "$STEPS" --warmup "$WARMUP" --json
        done
    fi
    if [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ]; then
        limit=()
        [ -n "$LIMIT" ] && limit=(--limit "$LIMIT")
        t0=$(date +%s)
        run train "$cltrain" train --epochs "$EPOCHS" --device "$dev" --data "fashion-mnist:$data" \
            --no-progress --out "$logs/cnn.safetensors" --log "$logs/train.jsonl" "${limit[@]}"
        train_wall=$(($(date +%s) - t0))
    fi
    if [ -x "$checkcl" ]; then
        run checkcl "$checkcl" --device "$dev"
    fi
    if [ -x "$convbench" ]; then
        # shellcheck disable=SC2086 # CONV_ARGS is a list of words
        run conv-gpu "$convbench" --device "$dev" --reps 5 $CONV_ARGS
    fi
    if [ -x "$gemmcl" ]; then # it takes its device from CLTRAIN_DEVICE
        run gemm-check env CLTRAIN_DEVICE="$dev" "$gemmcl"
        run gemm-bench env CLTRAIN_DEVICE="$dev" "$gemmcl" --bench
    fi
fi

# ---- PyTorch ----
torch_state="not available (no $PYTHON)"
torch_dev=""
if command -v "$PYTHON" >/dev/null; then
    probe=$("$PYTHON" -c 'import torch
print(torch.__version__, "yes" if torch.cuda.is_available() else "no",
      torch.cuda.get_device_name() if torch.cuda.is_available() else "-")' 2>/dev/null | tail -n1)
    if [ -z "$probe" ]; then
        torch_state="not available (no torch in $PYTHON)"
    else
        read -r torch_ver torch_gpu torch_name <<<"$probe"
        if [ "$torch_gpu" = yes ]; then
            torch_state=yes
            torch_dev=$torch_name
        else
            torch_state="not available (torch $torch_ver sees no CUDA/ROCm GPU)"
        fi
    fi
fi
[ "$torch_state" = yes ] && [ ! -e "$peer" ] && torch_state="not available (no $peer)"
if [ "$torch_state" = yes ]; then
    for m in $MODELS; do
        run "torch-$m" "$PYTHON" "$peer" --one "$m" --device cuda --steps "$STEPS" --warmup "$WARMUP"
    done
fi

# ---- tinygrad on the same OpenCL device ----
tg_state="not run (TINYGRAD=no)"
if [ "${TINYGRAD:-yes}" = yes ]; then
    tg_env=(env)
    [ -n "$tgpath" ] && [ -d "$tgpath" ] && tg_env+=("PYTHONPATH=$tgpath${PYTHONPATH:+:$PYTHONPATH}")
    tg_plat="" tg_args=()
    if [ $cpu_fallback = yes ]; then
        tg_plat=pocl
    elif [ -n "$nv" ]; then
        tg_plat=nvidia
    elif [ -n "$amd" ]; then
        tg_plat=amd
    elif [ -n "$intel" ]; then
        tg_plat=intel
    fi
    [ $cpu_fallback = no ] && tg_args=(--steps 20 --warmup 5) # the defaults are sized for CPUs
    if [ -z "$dev" ] || [ -z "$tg_plat" ]; then
        tg_state="not run (no device of a platform bench_tinygrad.py selects)"
    elif [ ! -e "$tgbench" ]; then
        tg_state="not run (no $tgbench)"
    elif ! "${tg_env[@]}" "$PYTHON" -c 'import tinygrad' 2>/dev/null; then
        tg_state="not run (tinygrad does not import in $PYTHON)"
    else
        run tinygrad "${tg_env[@]}" "$PYTHON" "$tgbench" --platform "$tg_plat" --cltrain "$cltrain" \
            --rounds "${TG_ROUNDS:-3}" \
            --models "${TG_MODELS:-mlp,cnn,resnet56}" "${tg_args[@]}" --json "$logs/tinygrad.json"
        tg_state=ran
    fi
fi

# ---- the report ----
# the selector the first network ran on, and that device's line of --devices
cl_dev_sel=""
for m in $MODELS; do
    [ -s "$logs/bench-$m.out" ] && cl_dev_sel=$(json_get device <"$logs/bench-$m.out") && break
done
cl_dev_line=""
[ -n "$cl_dev_sel" ] && cl_dev_line=$(grep "^$cl_dev_sel " "$logs/devices.out" 2>/dev/null | head -n1 | tr '|' ';')

: >"$OUT"
md "# cltrain on $host" ""
md "$(date -u '+%Y-%m-%d %H:%M UTC'); \`$(basename "$0")\` from $src" ""
for n in "${notes[@]}"; do md "> $n" ""; done
md "## Machine" ""
md "| | |" "|---|---|"
md "| OS | ${os:-?}, kernel $(uname -r), $glibc |"
md "| CPU | ${cpu:-?} ($ncpu threads), ${mem:-?} |"
md "| GPUs | $(tr '\n' ';' <<<"${gpus:-none seen}" | sed 's/;$//; s/;/; /g') |"
md "| device nodes | ${nodes:-none} |"
md "| OpenCL drivers found | ${drivers:-none} |"
md "| ICD | $icd_note |"
md "| cltrain device | ${dev:-none}${cl_dev_line:+: \`$cl_dev_line\`} |"
[ -e "$src/BUNDLE.txt" ] && md "| bundle | $(grep -E '^(bundled|source|glibc needed|packages)' "$src/BUNDLE.txt" | tr '\n' ';' | sed 's/;$//; s/;/; /g') |"
md ""
if [ -s "$logs/devices.out" ]; then
    md "\`cltrain --devices\`:" "" '```' "$(cat "$logs/devices.out")" '```' ""
elif [ "$(cat "$logs/version.rc")" != 0 ]; then
    md "\`cltrain --version\` failed:"
    err_tail version 12
    md ""
else
    md "\`cltrain --devices\` failed:"
    err_tail devices 12
    [ -e "$logs/devices-debug.err" ] && { md "" "With OCL_ICD_DEBUG=7:"; err_tail devices-debug 30; }
    md ""
fi

if [ -s "$logs/doctor.out" ]; then
    md "\`cltrain doctor\` (exit $(cat "$logs/doctor.rc")):" "" '```' "$(cat "$logs/doctor.out")" '```' ""
fi

md "## Seed benchmark" ""
if [ "$torch_state" = yes ]; then
    peer_where="PyTorch on $torch_dev with TF32 off"
else
    peer_where="PyTorch ${torch_state}"
fi
md "Median ms per training step (forward, backward, SGD with momentum; synthetic data; $STEPS timed steps after $WARMUP warm-up), cltrain on \`${dev:-none}\`, $peer_where. Ratio = cltrain ÷ PyTorch." ""
md "| network | batch | cltrain ms/step | PyTorch ms/step | ratio |" "|---|---|---|---|---|"
for m in $MODELS; do
    b="" c="" p="" r="—"
    f=$logs/bench-$m.out
    [ -e "$f" ] || : >"$f"
    c=$(json_get median_ms <"$f")
    b=$(json_get batch <"$f")
    if [ -z "$c" ] && [ -n "$dev" ]; then
        e=$(json_get error <"$f")
        [ -z "$e" ] && e=$(tail -n1 "$logs/bench-$m.err" 2>/dev/null)
        c="failed: $(cut -c1-120 <<<"$e" | tr '|' '/')"
    elif [ -z "$c" ]; then
        c="no device"
    fi
    if [ "$torch_state" = yes ]; then
        tf=$logs/torch-$m.out
        p=$(json_get median_ms <"$tf")
        [ -z "$b" ] && b=$(json_get batch <"$tf")
        [ -z "$p" ] && p="failed: $(tail -n1 "$logs/torch-$m.err" | cut -c1-120 | tr '|' '/')"
    else
        p=$torch_state
    fi
    if [[ $c =~ ^[0-9.]+$ ]] && [[ $p =~ ^[0-9.]+$ ]]; then
        r=$(awk -v a="$c" -v b="$p" 'BEGIN { printf "%.2f", a / b }')
        [ $cpu_fallback = yes ] && r="$r (cltrain on the CPU)"
    fi
    [[ $c =~ ^[0-9.]+$ ]] && c=$(awk -v a="$c" 'BEGIN { printf "%.1f", a }')
    [[ $p =~ ^[0-9.]+$ ]] && p=$(awk -v a="$p" 'BEGIN { printf "%.1f", a }')
    md "| $m | ${b:-?} | $c | $p | $r |"
done
md ""
if [ -s "$logs/tune.out" ]; then
    md "### Tuned (\`cltrain tune\`, $(json_get seconds <"$logs/tune.out") s: $(json_get shapes <"$logs/tune.out") shapes, $(json_get changed <"$logs/tune.out") picked other than the rule, CLBlast parameters kept: $(json_get clblast_kept <"$logs/tune.out"))" ""
    md "| network | untuned ms/step | tuned ms/step | untuned ÷ tuned |" "|---|---|---|---|"
    for m in $MODELS; do
        u=$(json_get median_ms <"$logs/bench-$m.out" 2>/dev/null) v=$(json_get median_ms <"$logs/tuned-$m.out" 2>/dev/null) r="—"
        [[ $u =~ ^[0-9.]+$ ]] && [[ $v =~ ^[0-9.]+$ ]] && r=$(awk -v a="$u" -v b="$v" 'BEGIN { printf "%.2f", a / b }')
        md "| $m | ${u:-—} | ${v:-—} | $r |"
    done
    md ""
fi
if [ "$torch_state" = yes ]; then
    tf=$logs/torch-${MODELS%% *}.out
    v="PyTorch $(json_get torch <"$tf")"
    for k in cuda hip cudnn; do
        x=$(json_get "$k" <"$tf")
        [ -n "$x" ] && [ "$x" != null ] && v="$v, $k $x"
    done
    md "$v (\`bench_peer.py --one NAME --device cuda\`: TF32 off, cuDNN autotuner on)." ""
fi

md "## Beside tinygrad on the same OpenCL device" ""
if [ "$tg_state" = ran ] && grep -q '^| ' "$logs/tinygrad.out" 2>/dev/null; then
    md "\`bench_tinygrad.py --platform $tg_plat\`: a full step of each (zero grads, forward, backward, SGD with momentum), one cltrain process then one tinygrad process per network and round." ""
    md "$(grep -v '^| \|^|-\|^$' "$logs/tinygrad.out" | sed 's/$/  /')" ""
    md "$(grep '^|' "$logs/tinygrad.out")" ""
elif [ "$tg_state" = ran ]; then
    md "**failed** (exit $(cat "$logs/tinygrad.rc")):"
    err_tail tinygrad
    md ""
else
    md "$tg_state." ""
fi

md "## Self-test" ""
if [ -e "$logs/selftest.rc" ]; then
    nok=$(grep -c '^ok ' "$logs/selftest.out")
    nfail=$(grep -c '^FAIL ' "$logs/selftest.out")
    if [ "$(cat "$logs/selftest.rc")" = 0 ]; then
        md "**passed**: $nok ops, forward and backward, against the host reference ($(head -n1 "$logs/selftest.out"))." ""
    else
        md "**FAILED** (exit $(cat "$logs/selftest.rc")): $nok ops ok, $nfail failed." "" '```'
        md "$(grep -v '^ok ' "$logs/selftest.out" | head -n 30)" "$(tail -n 5 "$logs/selftest.err")" '```' ""
    fi
else
    md "not run (no device)." ""
fi

md "## One epoch of the default CNN on Fashion-MNIST" ""
if [ -e "$logs/train.rc" ]; then
    ep=$(grep '"event": "epoch"' "$logs/train.jsonl" 2>/dev/null | tail -n1)
    if [ "$(cat "$logs/train.rc")" = 0 ] && [ -n "$ep" ]; then
        md "| epochs | epoch s | samples/s | train loss | test accuracy | test loss | wall s (with start-up) |"
        md "|---|---|---|---|---|---|---|"
        md "| $EPOCHS${LIMIT:+ (limit $LIMIT samples)} | $(json_get seconds <<<"$ep") | $(json_get samples_per_second <<<"$ep") | $(json_get train_loss <<<"$ep") | $(awk -v a="$(json_get test_accuracy <<<"$ep")" 'BEGIN { printf "%.2f %%", 100 * a }') | $(json_get test_loss <<<"$ep") | $train_wall |"
        md "" "\`cltrain train --epochs $EPOCHS --device $dev --data fashion-mnist:DIR\` (model cnn, batch 64, Adam)." ""
    else
        md "**failed** (exit $(cat "$logs/train.rc")):"
        err_tail train
        md ""
    fi
elif [ -n "$dev" ]; then
    md "not run: no Fashion-MNIST in $data." ""
else
    md "not run (no device)." ""
fi

md "## Where the time goes (\`bench --profile\`, summed by layer type, top 5)" ""
md "| network | layer type | share of the profiled step | fwd ms | bwd ms | layers |" "|---|---|---|---|---|---|"
any_profile=no
counts=()
for m in $MODELS; do
    f=$logs/bench-$m.out
    grep -q '"layers"' "$f" 2>/dev/null || continue
    any_profile=yes
    awk '{
        n = split($0, parts, /\{"name": /)
        for (i = 2; i <= n; i++) {
            p = parts[i]
            if (p !~ /"forward_ms": /)
                continue # a kernel_times entry, not a layer
            t = p; sub(/^.*"type": "/, "", t); sub(/".*$/, "", t)
            fw = p; sub(/^.*"forward_ms": /, "", fw); sub(/[,}].*$/, "", fw)
            bw = p; sub(/^.*"backward_ms": /, "", bw); sub(/[,}].*$/, "", bw)
            F[t] += fw; B[t] += bw; C[t]++; tot += fw + bw
        }
    } END {
        for (t in F)
            if (tot > 0)
                printf "%.1f %s %.2f %.2f %d\n", 100 * (F[t] + B[t]) / tot, t, F[t], B[t], C[t]
    }' "$f" | sort -k1,1nr | head -n 5 |
        awk -v m="$m" '{ printf "| %s | %s | %s %% | %s | %s | %s |\n", (NR == 1 ? m : ""), $2, $1, $3, $4, $5 }' >>"$OUT"
    counts+=("| $m | $(json_get launches_per_step <"$f") | $(json_get blocking_calls_per_step <"$f") | $(json_get kernels <"$f") | $(json_get gemm <"$f") |")
done
[ $any_profile = yes ] || md "| (no cltrain run succeeded) | | | | | |"
md ""
if [ ${#counts[@]} -gt 0 ]; then
    md "What the host asks of the device per step:" ""
    md "| network | kernel launches | blocking calls | kernels | GEMM |" "|---|---|---|---|---|"
    md "${counts[@]}" ""
fi

# the kernels that took the most time (bench --profile's kernel_times)
if [ $any_profile = yes ] && command -v "$PYTHON" >/dev/null; then
    md "## Where the time goes by kernel (each launch timed; top 6 per network)" ""
    md "| network | kernel | launches per step | ms per step | share |" "|---|---|---|---|---|"
    for m in $MODELS; do
        "$PYTHON" - "$m" "$logs/bench-$m.out" >>"$OUT" 2>/dev/null <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))[0]
ks = r.get("kernel_times", [])
tot = sum(k["ms"] for k in ks) or 1.0
for i, k in enumerate(ks[:6]):
    print("| %s | %s | %.0f | %.3f | %.1f %% |" % (name if i == 0 else "", k["name"], k["launches"],
                                              k["ms"], 100 * k["ms"] / tot))
PY
    done
    md ""
fi

if [ -e "$logs/checkcl.rc" ]; then
    md "## Kernel checks (\`checkcl\`: random shapes, both passes, finite differences)" ""
    if [ "$(cat "$logs/checkcl.rc")" = 0 ]; then
        md "**passed**: $(tail -n1 "$logs/checkcl.out") ($(head -n1 "$logs/checkcl.out"))." ""
    else
        md "**FAILED** (exit $(cat "$logs/checkcl.rc")):" "" '```'
        md "$(grep -v '^ok ' "$logs/checkcl.out" | head -n 30)" "$(tail -n 5 "$logs/checkcl.err")" '```' ""
    fi
fi

if [ -e "$logs/conv-gpu.rc" ]; then
    md "## Convolution forward variants (\`bench_conv_gpu\`)" ""
    md '```' "$(grep -v 'warning generated' "$logs/conv-gpu.out")" '```'
    [ "$(cat "$logs/conv-gpu.rc")" = 0 ] || err_tail conv-gpu
    md ""
fi

if [ -e "$logs/gemm-check.rc" ]; then
    md "## Own SGEMM tiles (\`test_gemm_cl\`)" ""
    md "Check (exit $(cat "$logs/gemm-check.rc")): $(tail -n1 "$logs/gemm-check.out" 2>/dev/null)" ""
    [ "$(cat "$logs/gemm-check.rc")" = 0 ] || { md '```' "$(grep -iv '^ok' "$logs/gemm-check.out" | head -n 20)" '```'; err_tail gemm-check; }
    if [ -s "$logs/gemm-bench.out" ]; then
        md "Beside CLBlast on the networks' shapes (GFLOP/s; \`chosen\`: the rule takes the own kernel):" ""
        md '```' "$(cat "$logs/gemm-bench.out")" '```'
    fi
    [ "$(cat "$logs/gemm-bench.rc" 2>/dev/null)" = 0 ] || err_tail gemm-bench
    md ""
fi

md "## Logs" "" "Every command's output: \`$logs/\` (NAME.out, NAME.err, NAME.rc)."
failed=""
for rc in "$logs"/*.rc; do
    [ "$(cat "$rc")" = 0 ] || failed="$failed $(basename "$rc" .rc)"
done
[ -n "$failed" ] && md "" "Commands that did not exit 0:$failed."
say "report: $OUT"
exit 0
