#!/usr/bin/env python3
"""test_crash.py CLTRAIN - crash safety of training checkpoints.

An uninterrupted run gives the reference: its per-epoch losses and its
final checkpoint. Each trial starts the same run and SIGKILLs it at a
seeded random moment (start-up, an epoch, an evaluation or a save); one
trial at least is killed in the middle of a checkpoint write: the test
watches for the atomic write's temporary file (CKPT.tmp.PID), freezes the
process with SIGSTOP, and kills it only if the temporary is still there
(the rename has not happened), so that trial is known to have died
mid-write. After each kill the checkpoint either does not exist (killed
before the first save) or loads with `cltrain eval`: never a half-written
file. A temporary left by the kill is kept, to show it does not disturb the
next run. Then `--resume` (or a fresh start when there is no checkpoint)
runs to the end, and its epoch losses must equal the reference's as
printed and its final checkpoint must equal the reference's byte for byte.

CRASH_SEED picks other kill times (default 20261122); CRASH_TRIALS the
number of random-time trials (default 5), on top of the mid-write one.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CLTRAIN = sys.argv[1]
SEED = int(os.environ.get("CRASH_SEED", "20261122"))
TRIALS = int(os.environ.get("CRASH_TRIALS", "5"))
EPOCHS = 4
ARGS = ["train", "--model", "mlp", "--limit", "3000", "--test-limit", "300", "--batch", "50",
        "--epochs", str(EPOCHS), "--seed", "7", "--no-progress"]
# the fields that must match; wall times and rates naturally differ
FIELDS = ("epoch", "step", "lr", "train_loss", "train_accuracy", "test_loss", "test_accuracy")

checks = 0
fails = 0


def ok(msg):
    global checks
    checks += 1
    print("ok   " + msg, flush=True)


def bad(msg):
    global checks, fails
    checks += 1
    fails += 1
    print("FAIL " + msg, flush=True)


def epochs_of(log):
    """The epoch lines of a --log file, keyed by epoch, as printed."""
    out = {}
    if not os.path.exists(log):
        return out
    with open(log) as f:
        for line in f:
            # compare the printed text of each number, not a re-parsed float
            rec = json.loads(line, parse_float=str, parse_int=str)
            if rec.get("event") == "epoch":
                out[int(rec["epoch"])] = tuple(rec[k] for k in FIELDS)
    return out


def ckpt_epoch(path):
    """The 'epoch' metadata of a safetensors checkpoint (read independently)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    return int(header["__metadata__"]["epoch"])


def temporaries(d):
    return sorted(p for p in os.listdir(d) if ".tmp." in p)


def run(args, **kw):
    return subprocess.run([CLTRAIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def start(d, log):
    return subprocess.Popen([CLTRAIN] + ARGS + ["--out", os.path.join(d, "ckpt"), "--log", log],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kill_at(proc, when):
    """SIGKILL after `when` seconds (or nothing if it ended first)."""
    try:
        proc.wait(timeout=when)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True


def kill_mid_write(proc, d, save):
    """Waits for the `save`-th checkpoint write (1-based; a write too short
    to be seen is not counted), stops the process there and, if the
    temporary is still there once it has stopped, kills it. Returns the
    number of writes seen when killed mid-write; 0 if the run ended first."""
    writes = 0
    watching = False
    tmp = os.path.join(d, "ckpt.tmp.%d" % proc.pid)
    while proc.poll() is None:
        if not os.path.exists(tmp):
            watching = False
        elif not watching:
            watching = True
            writes += 1
            if writes >= save:
                proc.send_signal(signal.SIGSTOP)
                os.waitpid(proc.pid, os.WUNTRACED)  # returns once every thread has stopped
                if os.path.exists(tmp):
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    return writes
                proc.send_signal(signal.SIGCONT)  # the rename won the race: the next save
        time.sleep(0.0002)
    return 0


def check_after_kill(name, d, ref):
    """The checkpoint is absent or loads; resume (or restart) reaches the
    reference's losses and final checkpoint."""
    ckpt = os.path.join(d, "ckpt")
    stray = temporaries(d)
    if os.path.exists(ckpt):
        r = run(["eval", "--weights", ckpt, "--limit", "100"])
        if r.returncode == 0 and "accuracy" in r.stdout:
            ok("%s: the checkpoint after the kill loads (epoch %d)" % (name, ckpt_epoch(ckpt)))
        else:
            bad("%s: the checkpoint after the kill does not load: %s" % (name, r.stdout.strip()[-300:]))
            return
        resume = ["--resume", ckpt]
        done = ckpt_epoch(ckpt)
    else:
        ok("%s: killed before the first save, no checkpoint" % name)
        resume = []
        done = 0
    log = os.path.join(d, "resumed.jsonl")
    r = run(ARGS + resume + ["--out", ckpt, "--log", log])
    if r.returncode != 0:
        bad("%s: the run after the kill failed (exit %d): %s" % (name, r.returncode, r.stdout.strip()[-300:]))
        return
    got = epochs_of(log)
    want = {e: ref[e] for e in range(done + 1, EPOCHS + 1)}
    if got == want:
        ok("%s: %s epochs %d-%d with the reference's losses" %
           (name, "resumed" if resume else "restarted", done + 1, EPOCHS))
    else:
        bad("%s: epochs after the kill differ from the reference" % name)
        for e in sorted(set(got) | set(want)):
            print("  | epoch %d: got %s, want %s" % (e, got.get(e), want.get(e)))
    if open(ckpt, "rb").read() == open(os.path.join(os.path.dirname(d), "ref.ckpt"), "rb").read():
        ok("%s: the final checkpoint equals the reference's byte for byte" % name)
    else:
        bad("%s: the final checkpoint differs from the reference's" % name)
    if stray:
        ok("%s: the temporary %s left by the kill did not disturb the next run" % (name, stray[0]))


def main():
    root = tempfile.mkdtemp(prefix="cltrain-crash-")
    try:
        ref_log = os.path.join(root, "ref.jsonl")
        t0 = time.monotonic()
        r = run(ARGS + ["--out", os.path.join(root, "ref.ckpt"), "--log", ref_log])
        span = time.monotonic() - t0
        ref = epochs_of(ref_log)
        if r.returncode != 0 or sorted(ref) != list(range(1, EPOCHS + 1)):
            bad("the reference run failed (exit %d): %s" % (r.returncode, r.stdout.strip()[-300:]))
            return
        ok("reference: %d epochs in %.1f s" % (EPOCHS, span))
        rng = random.Random(SEED)
        for t in range(TRIALS):
            d = os.path.join(root, "t%d" % t)
            os.mkdir(d)
            # the end of the span is left out: a run a little faster than
            # the reference's would finish before the kill
            when = rng.uniform(0.02, 0.85) * span
            p = start(d, os.path.join(d, "killed.jsonl"))
            if kill_at(p, when):
                check_after_kill("trial %d (SIGKILL at %.2f s)" % (t + 1, when), d, ref)
            else:
                print("note trial %d: the run ended before the kill at %.2f s" % (t + 1, when))
        # mid-write: aim at a random save; up to three runs if every rename wins the race
        hit = False
        for attempt in range(3):
            d = os.path.join(root, "w%d" % attempt)
            os.mkdir(d)
            save = rng.randint(1, EPOCHS - 1)
            p = start(d, os.path.join(d, "killed.jsonl"))
            writes = kill_mid_write(p, d, save)
            if writes:
                hit = True
                name = "mid-write kill (run %d, during save %d or later)" % (attempt + 1, writes)
                ckpt = os.path.join(d, "ckpt")
                if writes >= 2 and not os.path.exists(ckpt):
                    bad("%s: the previous checkpoint is gone" % name)
                elif writes >= 2:
                    ok("%s: the previous checkpoint (epoch %d) is in place" % (name, ckpt_epoch(ckpt)))
                check_after_kill(name, d, ref)
                if not temporaries(d):
                    bad("mid-write kill: the temporary file vanished")
                break
        if not hit:
            bad("no trial managed to kill the process during a checkpoint write")
    finally:
        shutil.rmtree(root, ignore_errors=True)


main()
print("test_crash: %d checks, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
