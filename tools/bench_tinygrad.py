#!/usr/bin/env python3
"""cltrain's GPU class side by side with tinygrad on the same OpenCL device.

Both sides time the same full training step of three zoo networks (`cltrain
zoo NAME` prints each): zero the gradients, forward, softmax cross-entropy,
backward, SGD (lr 0.01, momentum 0.9), the device synchronized at the end.
Batch normalization runs in training mode (batch statistics, running
averages updated). The networks and their inputs:

    mlp       batch 64    1x28x28 (Fashion-MNIST)   784-256-128-10, ReLU
    cnn       batch 64    1x28x28                   conv-bn-relu-pool x2, fc 128, fc 10
    resnet56  batch 128   3x32x32 (CIFAR-10)        3 stages x 9 basic blocks, option-A shortcuts

cltrain's side is `CLTRAIN_KERNELS=gpu cltrain bench --model NAME --batch B
--steps S --warmup W --device SEL --json` (its median ms per step). tinygrad's
side builds the same layers (the parameter counts are checked against
`cltrain model NAME`), realizes the weights before the first random input
(otherwise tinygrad 0.14's scheduler reports a cycle), and runs the step
under TinyJit. Its first step (scheduling, code generation and OpenCL
compilation; kernels tinygrad has already compiled come from its disk cache,
so later rounds' first steps are cheaper) is recorded apart from the steady
state; the second step is the JIT's capture and always counts as warm-up.

Each round runs, for each network, one cltrain process and then one tinygrad
process, so both see the same device and the same load from elsewhere on the
machine; the figures are the medians over rounds of each side's median step.

    python3 tools/bench_tinygrad.py --rounds 3
    python3 tools/bench_tinygrad.py --platform rusticl --models mlp,cnn

--platform pocl (default) runs both sides on pocl's CPU device (name
containing "pthread"); --platform rusticl sets RUSTICL_ENABLE=llvmpipe and
runs both on Mesa rusticl's llvmpipe device; --platform nvidia, amd or intel
runs both on the first device whose device or platform name holds "NVIDIA",
"AMD" or "Intel(R) Graphics" (a GPU vendor's own OpenCL driver). On a GPU
pass --steps and --warmup: the defaults are sized for CPU devices. cltrain's --device takes the
name substring. tinygrad 0.14 (DEV=CL, its OpenCL 1.2 backend) has no
platform selector: CLDevice takes the first platform the ICD loader lists
(pocl here) and asks it only for CL_DEVICE_TYPE_GPU or CL_DEVICE_TYPE_DEFAULT
devices, and DEV=CL:N only indexes that list; llvmpipe, a CPU-type device
on the second platform, is never reached. So the tinygrad process fills
tinygrad's class-level device list (CLDevice.device_ids, which CLDevice's
constructor fills only while it is None) with the one device whose name or
platform name contains the same substring, found over all platforms and all
device types, before tinygrad opens the device. The installed package is not
changed. Both sides' OpenCL device names are printed.

tinygrad is a peer for comparison only, never a dependency of cltrain or its
tests: without it the script says so and exits 0 ("skipped").
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

BATCH = {"mlp": 64, "cnn": 64, "resnet56": 128}
SHAPE = {"mlp": (1, 28, 28), "cnn": (1, 28, 28), "resnet56": (3, 32, 32)}
CLASSES = 10
# default (steps, warmup) per network, the same for both sides: a resnet56
# step takes seconds on a CPU; the mlp's 2 ms steps warm up for 50, since
# pocl's worker threads run the first ~0.1 s of a process's launches at
# about 1.6x the latency (cltrain measured 2.3 ms per step there, 1.45 ms
# after; tinygrad's timed steps come after its compile and JIT capture,
# over a second in)
STEPS = {"mlp": (20, 50), "cnn": (10, 2), "resnet56": (3, 1)}
PLATFORM = {"pocl": ("pthread", {}), "rusticl": ("llvmpipe", {"RUSTICL_ENABLE": "llvmpipe"}),
            "nvidia": ("NVIDIA", {}), "amd": ("AMD", {}), "intel": ("Intel(R) Graphics", {})}


def tinygrad_version():
    """tinygrad's version: its package metadata, else the module's own
    (a copy without its dist-info, as a bundle may carry), else "unknown"."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("tinygrad")
    except PackageNotFoundError:
        import tinygrad
        return getattr(tinygrad, "__version__", "unknown")


def select_cl_device(substr):
    """Make tinygrad's CL device the first OpenCL device (any platform, any
    type) whose device or platform name contains substr; returns its name."""
    import ctypes
    from tinygrad.runtime import ops_cl
    cl = ops_cl.cl

    def info(fn, obj, param):
        size = ctypes.c_size_t()
        ops_cl.check(fn(obj, param, 0, None, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(size.value)
        ops_cl.check(fn(obj, param, size.value, ctypes.byref(buf), None))
        return buf.value.decode(errors="replace")

    n = ctypes.c_uint32()
    ops_cl.check(cl.clGetPlatformIDs(0, None, n))
    plats = (cl.cl_platform_id * n.value)()
    ops_cl.check(cl.clGetPlatformIDs(n.value, plats, None))
    seen = []
    for p in plats:
        pname = info(cl.clGetPlatformInfo, p, cl.CL_PLATFORM_NAME)
        nd = ctypes.c_uint32()
        if cl.clGetDeviceIDs(p, cl.CL_DEVICE_TYPE_ALL, 0, None, nd) != 0 or nd.value == 0:
            continue
        devs = (cl.cl_device_id * nd.value)()
        ops_cl.check(cl.clGetDeviceIDs(p, cl.CL_DEVICE_TYPE_ALL, nd.value, devs, None))
        for d in devs:
            dname = info(cl.clGetDeviceInfo, d, cl.CL_DEVICE_NAME)
            seen.append(f"{pname}: {dname}")
            if substr.lower() in dname.lower() or substr.lower() in pname.lower():
                ops_cl.CLDevice.device_ids = (cl.cl_device_id * 1)(d)
                return dname
    raise RuntimeError(f"no OpenCL device matches '{substr}' (found: {'; '.join(seen) or 'none'})")


def build(name):
    """The zoo network NAME in tinygrad: returns a callable model."""
    from tinygrad import nn

    if name == "mlp":
        class MLP:
            def __init__(self):
                self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

            def __call__(self, x):
                return self.fc3(self.fc2(self.fc1(x.flatten(1)).relu()).relu())
        return MLP()
    if name == "cnn":
        class CNN:
            def __init__(self):
                self.conv1, self.bn1 = nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm(32)
                self.conv2, self.bn2 = nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm(64)
                self.fc1, self.fc2 = nn.Linear(64 * 7 * 7, 128), nn.Linear(128, 10)

            def __call__(self, x):
                x = self.bn1(self.conv1(x)).relu().max_pool2d(2)
                x = self.bn2(self.conv2(x)).relu().max_pool2d(2)
                return self.fc2(self.fc1(x.flatten(1)).relu())
        return CNN()
    if name == "resnet56":
        class Basic:
            def __init__(self, cin, c, stride):
                self.c1, self.b1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False), nn.BatchNorm(c)
                self.c2, self.b2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm(c)
                self.stride, self.pad = stride, c - cin

            def __call__(self, x):
                y = self.b2(self.c2(self.b1(self.c1(x)).relu()))
                s = x[:, :, ::self.stride, ::self.stride] if self.stride > 1 else x
                if self.pad:  # option A: zero-padded channels
                    s = s.pad(((0, 0), (0, self.pad), (0, 0), (0, 0)))
                return (y + s).relu()

        class ResNet56:
            def __init__(self):
                self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm(16)
                self.blocks, cin = [], 16
                for s in range(3):
                    c = 16 << s
                    for k in range(9):
                        self.blocks.append(Basic(cin, c, 2 if s > 0 and k == 0 else 1))
                        cin = c
                self.fc = nn.Linear(64, 10)

            def __call__(self, x):
                x = self.bn1(self.conv1(x)).relu()
                for b in self.blocks:
                    x = b(x)
                return self.fc(x.mean(axis=(2, 3)))
        return ResNet56()
    raise ValueError(name)


def time_tinygrad(name, batch, steps, warmup, select):
    dev_name = select_cl_device(select)
    from tinygrad import Tensor, Device, TinyJit, nn
    from tinygrad.helpers import Context
    Tensor.manual_seed(1)
    model = build(name)
    state = nn.state.get_parameters(model)
    params = [t for t in state if t.is_param]
    Tensor.realize(*state)  # weights first, then the random inputs
    opt = nn.optim.SGD(params, lr=0.01, momentum=0.9)
    x = (Tensor.rand(batch, *SHAPE[name]) - 0.5).realize()
    y = Tensor.randint(batch, high=CLASSES).realize()
    dev = Device[Device.DEFAULT]

    @TinyJit
    def step(x, y):
        opt.zero_grad()
        loss = model(x).sparse_categorical_crossentropy(y).backward()
        return loss.realize(*opt.schedule_step())

    times, first, capture, loss = [], None, None, None
    with Context(TRAINING=1):
        # step 1: schedule + compile (reported apart); step 2: JIT capture
        for i in range(1 + max(warmup, 1) + steps):
            dev.synchronize()
            t0 = time.perf_counter()
            loss = step(x, y)
            dev.synchronize()
            dt = 1e3 * (time.perf_counter() - t0)
            if i == 0:
                first = dt
            elif i == 1:
                capture = dt
            elif i > max(warmup, 1):
                times.append(dt)
    loss = loss.item()
    times.sort()
    return {"model": name, "batch": batch, "steps": steps, "median_ms": statistics.median(times),
            "min_ms": times[0], "first_step_ms": first, "capture_step_ms": capture,
            "params": sum(t.numel() for t in params),
            "loss": loss, "device": Device.DEFAULT, "device_name": dev.device_name,
            "selected": dev_name, "tinygrad": tinygrad_version()}


def cltrain_params(cltrain, name):
    out = subprocess.run([cltrain, "model", name], capture_output=True, text=True)
    m = re.search(r"total trainable parameters: (\d+)", out.stdout)
    return int(m.group(1)) if m else None


def run_json(cmd, env, what):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    try:
        r = json.loads(out.stdout)
        return r[0] if isinstance(r, list) else r
    except (ValueError, IndexError):
        print(f"{what} failed (exit {out.returncode}): {(out.stderr or out.stdout).strip()[-600:]}",
              file=sys.stderr)
        return None


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mlp,cnn,resnet56", help="comma-separated, of: " + ",".join(BATCH))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, help="timed steps per run (default: mlp 20, cnn 10, resnet56 3)")
    ap.add_argument("--warmup", type=int, help="untimed steps first (default: mlp 50, cnn 2, resnet56 1)")
    ap.add_argument("--cltrain", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                      "build", "tools", "cltrain"))
    ap.add_argument("--platform", choices=sorted(PLATFORM), default="pocl")
    ap.add_argument("--json", metavar="FILE", help="also write the rows (and every round) as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: time one network in tinygrad
    ap.add_argument("--select", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(time_tinygrad(a.one, BATCH[a.one], a.steps, a.warmup, a.select)))
        return 0
    try:
        import tinygrad  # noqa: F401
    except ImportError as e:
        print(f"tinygrad is not importable ({e}): install it (pip install tinygrad) to compare; skipped")
        return 0
    models = [m for m in a.models.split(",") if m]
    for m in models:
        if m not in BATCH:
            ap.error(f"unknown model '{m}' (known: {', '.join(BATCH)})")
    if not os.access(a.cltrain, os.X_OK):
        ap.error(f"no cltrain binary at {a.cltrain} (build it, or pass --cltrain PATH)")
    select, extra_env = PLATFORM[a.platform]
    env = dict(os.environ, **extra_env)
    cl_env = dict(env, CLTRAIN_KERNELS="gpu")
    tg_env = dict(env, DEV="CL")
    tg_env.pop("CL", None)  # CL=1 is refused by tinygrad 0.14

    runs = {m: {"cltrain": [], "tinygrad": []} for m in models}
    names = {"cltrain": set(), "tinygrad": set()}
    for r in range(a.rounds):
        for m in models:
            steps = a.steps if a.steps is not None else STEPS[m][0]
            warmup = a.warmup if a.warmup is not None else STEPS[m][1]
            c = run_json([a.cltrain, "bench", "--model", m, "--batch", str(BATCH[m]), "--steps", str(steps),
                          "--warmup", str(warmup), "--device", select, "--json"], cl_env, f"{m}: cltrain")
            t = run_json([sys.executable, os.path.abspath(__file__), "--one", m, "--steps", str(steps),
                          "--warmup", str(warmup), "--select", select], tg_env, f"{m}: tinygrad")
            for side, res in (("cltrain", c), ("tinygrad", t)):
                if res:
                    runs[m][side].append(res)
                    names[side].add(res.get("device_name", "?"))
            print(f"round {r + 1}/{a.rounds} {m}: cltrain {fmt(c and c['median_ms'])} ms, tinygrad "
                  f"{fmt(t and t['median_ms'])} ms (first step {fmt(t and t['first_step_ms'], '.0f')} ms)",
                  file=sys.stderr, flush=True)
        if a.json:  # what the rounds so far measured, should a time limit stop the rest
            with open(a.json, "w") as f:
                json.dump({"platform": a.platform, "partial": True, "rounds_done": r + 1, "runs": runs}, f, indent=1)

    print(f"platform: {a.platform}")
    for side in ("cltrain", "tinygrad"):
        print(f"{side} OpenCL device: {' | '.join(sorted(names[side])) or '-'}")
    tg_version = next((x[0]["tinygrad"] for x in (runs[m]["tinygrad"] for m in models) if x), "?")
    print(f"tinygrad {tg_version}, DEV=CL, TinyJit; medians over {a.rounds} round(s) of each run's median step")
    print()
    print("| network | batch | params (cltrain / tinygrad) | steps | cltrain ms | tinygrad ms "
          "| tinygrad first step ms (median, max) | tinygrad 2nd (JIT capture) ms | cltrain / tinygrad |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for m in models:
        cm = [x["median_ms"] for x in runs[m]["cltrain"]]
        tm = [x["median_ms"] for x in runs[m]["tinygrad"]]
        tf = [x["first_step_ms"] for x in runs[m]["tinygrad"]]
        tc = [x["capture_step_ms"] for x in runs[m]["tinygrad"]]
        cp = cltrain_params(a.cltrain, m)
        tp = runs[m]["tinygrad"][0]["params"] if tm else None
        row = {"model": m, "batch": BATCH[m], "platform": a.platform,
               "steps": a.steps if a.steps is not None else STEPS[m][0],
               "cltrain_ms": statistics.median(cm) if cm else None,
               "tinygrad_ms": statistics.median(tm) if tm else None,
               "tinygrad_first_step_ms": statistics.median(tf) if tf else None,
               "tinygrad_first_step_ms_max": max(tf) if tf else None,
               "tinygrad_capture_step_ms": statistics.median(tc) if tc else None,
               "cltrain_params": cp, "tinygrad_params": tp, "rounds": runs[m]}
        row["ratio"] = row["cltrain_ms"] / row["tinygrad_ms"] if cm and tm else None
        rows.append(row)
        pc = f"{fmt(cp, 'd')} / {fmt(tp, 'd')}" + ("" if cp == tp else " MISMATCH")
        print(f"| {m} | {BATCH[m]} | {pc} | {row['steps']} | {fmt(row['cltrain_ms'])} | {fmt(row['tinygrad_ms'])} "
              f"| {fmt(row['tinygrad_first_step_ms'], '.0f')} (max {fmt(row['tinygrad_first_step_ms_max'], '.0f')}) "
              f"| {fmt(row['tinygrad_capture_step_ms'], '.0f')} "
              f"| {fmt(row['ratio'], '.2f')} |")
        if cp is not None and tp is not None and cp != tp:
            print(f"{m}: parameter counts differ (cltrain {cp}, tinygrad {tp})", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"platform": a.platform, "devices": {k: sorted(v) for k, v in names.items()},
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
