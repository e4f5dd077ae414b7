#!/usr/bin/python3
"""The seed benchmark in PyTorch, side by side with `cltrain bench`.

Shi et al. 2017 time one mini-batch of training (forward, backward, SGD
update) of seven networks: FCN-S, AlexNet-S, ResNet-50, FCN-R, AlexNet-R,
ResNet-56 and LSTM. This script builds the same networks as cltrain's zoo
(`cltrain zoo NAME` prints each), at the same batch sizes, with the same
optimizer (SGD, lr 0.01, momentum 0.9) on the same kind of synthetic data,
times them with PyTorch on the CPU, optionally runs `cltrain bench --json`
for the same networks, and prints the table with cltrain / PyTorch per
network.

PyTorch is a peer for comparison only, never a dependency of cltrain or its
tests. It needs Debian's python3-torch, hence /usr/bin/python3:

    /usr/bin/python3 tools/bench_peer.py --threads 2 --cltrain build/tools/cltrain

--device cuda times the networks on the GPU instead (CUDA or ROCm builds of
PyTorch) with TF32 off for matrix products and convolutions, so both sides
compute in plain float32, and cuDNN's autotuner on (the warm-up steps absorb
its search); each step ends with torch.cuda.synchronize(). tools/gpu_report.sh
uses it as `bench_peer.py --one NAME --device cuda`.

--precision bf16 times PyTorch under torch.autocast("cpu", dtype=torch.bfloat16)
(forward and loss; oneDNN's bf16 kernels where the CPU has AVX512_BF16) and
cltrain with `bench --precision bf16`; fp32 (the default) neither.

With --best-env (the default), each network is also timed with
OMP_WAIT_POLICY=PASSIVE and glibc malloc thresholds raised (a second
process), and the faster of the two PyTorch runs is used.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SEED_BATCH = {"fcn-s": 64, "alexnet-s": 16, "resnet50": 16, "fcn-r": 1024, "alexnet-r": 1024,
              "resnet56": 128, "lstm": 128, "gpt": 64}
ORDER = ["fcn-s", "alexnet-s", "resnet50", "fcn-r", "alexnet-r", "resnet56", "lstm"]
# not one of the seven; --model gpt times the zoo's transformer
EXTRA = ["gpt"]
# token models: (vocabulary, sequence length T) of their (T, N) input
TOKENS = {"lstm": (10000, 32), "gpt": (256, 128)}
PASSIVE_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "MALLOC_MMAP_THRESHOLD_": "4294967296",
               "MALLOC_TRIM_THRESHOLD_": "68719476736", "MALLOC_TOP_PAD_": "1073741824"}


def build(name, torch):
    nn = torch.nn

    def fcn(sizes):
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(nn.Sigmoid())
        return nn.Sequential(*layers), (sizes[0],), sizes[-1]

    if name == "fcn-r":
        return fcn([784, 2048, 4096, 1024, 10])
    if name == "fcn-s":
        return fcn([26752, 2048, 2048, 2048, 26752])
    if name == "alexnet-r":
        lrn = lambda: nn.LocalResponseNorm(3, alpha=5e-05, beta=0.75, k=1.0)
        net = nn.Sequential(
            nn.Conv2d(3, 32, 5, padding=2), nn.MaxPool2d(3, 2), nn.ReLU(), lrn(),
            nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2), lrn(),
            nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2), lrn(),
            nn.Flatten(), nn.Linear(576, 10))
        return net, (3, 32, 32), 10
    if name == "alexnet-s":
        net = nn.Sequential(
            nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2),
            nn.Flatten(), nn.Dropout(0.5), nn.Linear(9216, 4096), nn.ReLU(),
            nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000))
        return net, (3, 224, 224), 1000
    if name == "resnet56":
        class Basic(nn.Module):
            def __init__(self, cin, c, stride):
                super().__init__()
                self.c1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
                self.b1 = nn.BatchNorm2d(c)
                self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
                self.b2 = nn.BatchNorm2d(c)
                self.stride, self.pad = stride, c - cin

            def forward(self, x):
                y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
                s = x[:, :, ::self.stride, ::self.stride] if self.stride > 1 else x
                if self.pad:
                    s = torch.nn.functional.pad(s, (0, 0, 0, 0, 0, self.pad))
                return torch.relu(y + s)

        layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
        cin = 16
        for s in range(3):
            c = 16 << s
            for k in range(9):
                layers.append(Basic(cin, c, 2 if s > 0 and k == 0 else 1))
                cin = c
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
        return nn.Sequential(*layers), (3, 32, 32), 10
    if name == "resnet50":
        class Bottleneck(nn.Module):
            def __init__(self, cin, w, stride):
                super().__init__()
                self.c1 = nn.Conv2d(cin, w, 1, bias=False)
                self.b1 = nn.BatchNorm2d(w)
                self.c2 = nn.Conv2d(w, w, 3, stride, 1, bias=False)
                self.b2 = nn.BatchNorm2d(w)
                self.c3 = nn.Conv2d(w, 4 * w, 1, bias=False)
                self.b3 = nn.BatchNorm2d(4 * w)
                self.down = None
                if stride != 1 or cin != 4 * w:
                    self.down = nn.Sequential(nn.Conv2d(cin, 4 * w, 1, stride, bias=False),
                                              nn.BatchNorm2d(4 * w))

            def forward(self, x):
                y = torch.relu(self.b1(self.c1(x)))
                y = torch.relu(self.b2(self.c2(y)))
                y = self.b3(self.c3(y))
                return torch.relu(y + (self.down(x) if self.down is not None else x))

        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                  nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for s, n in enumerate([3, 4, 6, 3]):
            w = 64 << s
            for k in range(n):
                layers.append(Bottleneck(cin, w, 2 if s > 0 and k == 0 else 1))
                cin = 4 * w
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
        return nn.Sequential(*layers), (3, 224, 224), 1000
    if name == "lstm":
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10000, 256)
                self.lstm = nn.LSTM(256, 256, 2)
                self.decoder = nn.Linear(256, 10000)

            def forward(self, x):
                y, _ = self.lstm(self.embed(x))
                return self.decoder(y).reshape(-1, 10000)

        return LM(), None, 10000
    if name == "gpt":
        # the zoo gpt as tools/pytorch_gpt.py builds it (the same module that
        # loads cltrain's checkpoints): 4 blocks, 4 heads, width 192, T 128
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from pytorch_gpt import GPT

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.gpt = GPT(256, 192, 4, 128, 4)

            def forward(self, x):
                return self.gpt(x).reshape(-1, 256)

        return LM(), None, 256
    raise ValueError(name)


def time_pytorch(name, batch, steps, warmup, threads, device="cpu", precision="fp32"):
    import torch
    torch.manual_seed(1)
    torch.set_num_threads(threads)
    gpu = device != "cpu"
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    net, shape, classes = build(name, torch)
    params = sum(p.numel() for p in net.parameters())
    if shape is None:  # token sequences (T, N), next-token labels for every step
        vocab, t = TOKENS[name]
        x = torch.randint(0, vocab, (t, batch))
        y = torch.randint(0, classes, (t * batch,))
    else:
        x = torch.rand((batch,) + shape) - 0.5
        y = torch.randint(0, classes, (batch,))
    if gpu:
        net, x, y = net.to(device), x.to(device), y.to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    net.train()
    times = []
    import contextlib
    cast = (torch.autocast(device_type="cuda" if gpu else "cpu", dtype=torch.bfloat16)
            if precision == "bf16" else contextlib.nullcontext())
    for i in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        with cast:
            loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    r = {"model": name, "batch": batch, "median_ms": 1e3 * times[len(times) // 2],
         "min_ms": 1e3 * times[0], "params": params, "torch": torch.__version__}
    if gpu:
        r.update({"device": device, "device_name": torch.cuda.get_device_name(),
                  "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
                  "cudnn": torch.backends.cudnn.version(), "tf32": False})
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", choices=ORDER + EXTRA,
                    help="network (repeatable); default: the seven seed networks")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="where PyTorch runs (cuda: also ROCm builds), TF32 off")
    ap.add_argument("--cltrain", help="path of the cltrain binary: also run `cltrain bench` and compare")
    ap.add_argument("--no-best-env", action="store_true", help="only the default environment")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat PyTorch and cltrain back to back N times; medians over rounds")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                    help="bf16: PyTorch under bf16 autocast, cltrain bench --precision bf16")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: time one network, print JSON
    a = ap.parse_args()
    if a.one:
        print(json.dumps(time_pytorch(a.one, SEED_BATCH[a.one], a.steps, a.warmup, a.threads, a.device,
                                      a.precision)))
        return 0
    models = a.model or ORDER
    rows = []
    for m in models:
        # Each round times PyTorch (each environment) and cltrain back to
        # back; the figure per side is the median over rounds, so a burst of
        # load from elsewhere on the machine hits one round, not the result.
        runs = {}
        cls = []
        envs = [{}] if a.no_best_env or a.device != "cpu" else [{}, PASSIVE_ENV]
        for _ in range(a.rounds):
            for extra in envs:
                env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads), **extra)
                out = subprocess.run([sys.executable, __file__, "--one", m, "--steps", str(a.steps), "--warmup",
                                      str(a.warmup), "--threads", str(a.threads), "--device", a.device,
                                      "--precision", a.precision],
                                     env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"{m}: PyTorch failed: {out.stderr.strip()[-300:]}", file=sys.stderr)
                    continue
                r = json.loads(out.stdout)
                runs.setdefault("passive" if extra else "default", []).append(r["median_ms"])
            if a.cltrain:
                dev = ["--device", "gpu"] if a.device != "cpu" else []
                out = subprocess.run([a.cltrain, "bench", "--model", m, "--steps", str(a.steps), "--warmup",
                                      str(a.warmup), "--json", "--precision", a.precision] + dev,
                                     capture_output=True, text=True)
                try:
                    cls.append(json.loads(out.stdout)[0]["median_ms"])
                except (ValueError, IndexError, KeyError):
                    print(f"{m}: cltrain failed: {out.stderr.strip()[-200:]}", file=sys.stderr)
        best = None
        for env_name, times in runs.items():
            med = statistics.median(times)
            if best is None or med < best["median_ms"]:
                best = {"median_ms": med, "env": env_name}
        cl = {"median_ms": statistics.median(cls)} if cls else ({"error": "failed"} if a.cltrain else None)
        rows.append((m, best, cl))
        print(f"{m}: pytorch {best['median_ms'] if best else float('nan'):.1f} ms"
              + (f", cltrain {cl.get('median_ms', float('nan')):.1f} ms" if cl else "")
              + f" ({a.rounds} round{'s' if a.rounds > 1 else ''})", file=sys.stderr)
    print(f"| network | batch | PyTorch ms (median, env) | cltrain ms (median) | cltrain / PyTorch |")
    print(f"|---|---|---|---|---|")
    for m, p, c in rows:
        pm = f"{p['median_ms']:.1f} ({p['env']})" if p else "failed"
        cm = f"{c['median_ms']:.1f}" if c and "median_ms" in c else ("failed" if c else "-")
        ratio = f"{c['median_ms'] / p['median_ms']:.2f}" if p and c and "median_ms" in c else "-"
        print(f"| {m} | {SEED_BATCH[m]} | {pm} | {cm} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
