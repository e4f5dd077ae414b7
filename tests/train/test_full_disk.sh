#!/usr/bin/env bash
# test_full_disk.sh CLTRAIN - a checkpoint saved onto a full file system
# (a small tmpfs) fails with exit 1 and a message naming the file, leaves
# the previous checkpoint byte for byte as it was and still loadable, and
# leaves no temporary file behind. test_train.sh covers the same through
# the file size limit (EFBIG); this is the real ENOSPC. Mounting needs
# root (or a user namespace that allows it): otherwise it skips (exit 77).
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"
mnt="$tmp/small"
mkdir -p "$mnt"
cleanup() { mountpoint -q "$mnt" && umount "$mnt"; rm -rf "$tmp"; }
trap cleanup EXIT
common=(--model mlp --limit 1000 --test-limit 200 --batch 50 --no-progress)

if [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"; exit 1
fi
if ! mount -t tmpfs -o size=8m tmpfs "$mnt" 2>"$tmp/mount.err"; then
    echo "skipped: cannot mount a tmpfs here ($(head -1 "$tmp/mount.err"))"; exit 77
fi

# a checkpoint on the small file system, then fill the rest of it
if ! "$cltrain" train "${common[@]}" --epochs 1 --out "$mnt/ckpt" >"$tmp/out" 2>&1; then
    bad "the first checkpoint could not be written"; sed 's/^/  | /' "$tmp/out" | tail -3; exit 1
fi
cp "$mnt/ckpt" "$tmp/ckpt.copy"
dd if=/dev/zero of="$mnt/filler" bs=64k >/dev/null 2>&1 # stops at ENOSPC
avail=$(df --output=avail -B1 "$mnt" | tail -1 | tr -d ' ')
echo "free on the tmpfs: $avail bytes; a checkpoint takes $(stat -c %s "$tmp/ckpt.copy")"

"$cltrain" train "${common[@]}" --epochs 2 --resume "$mnt/ckpt" --out "$mnt/ckpt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ]; then ok "a save onto a full disk exits 1"; else bad "a save onto a full disk: exit $rc"; fi
if grep -q "cannot write $mnt/ckpt: No space left on device; the previous file (if any) is untouched" "$tmp/err"; then
    ok "the message names the file and the cause"
else
    bad "unclear message"; sed 's/^/  | /' "$tmp/err" | tail -3
fi
if cmp -s "$mnt/ckpt" "$tmp/ckpt.copy"; then ok "the previous checkpoint is untouched"; else bad "the previous checkpoint changed"; fi
if "$cltrain" eval --weights "$mnt/ckpt" --limit 200 >"$tmp/out" 2>&1 && grep -q accuracy "$tmp/out"; then
    ok "the previous checkpoint still loads"
else
    bad "the previous checkpoint does not load"; sed 's/^/  | /' "$tmp/out" | tail -3
fi
if ls "$mnt"/ckpt.tmp.* >/dev/null 2>&1; then bad "a temporary file was left behind"; else ok "no temporary file left"; fi

# with room again, the same resume succeeds
rm -f "$mnt/filler"
if "$cltrain" train "${common[@]}" --epochs 2 --resume "$mnt/ckpt" --out "$mnt/ckpt" >"$tmp/out" 2>&1; then
    ok "with space freed the resume saves"
else
    bad "the resume failed with space freed"; sed 's/^/  | /' "$tmp/out" | tail -3
fi

echo "test_full_disk: $checks checks, $fails failed"
[ "$fails" -eq 0 ]
