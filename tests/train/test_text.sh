#!/usr/bin/env bash
# test_text.sh CLTRAIN - training on text through the CLI, on small texts
# made here: a byte-level language model (its loss in nats per byte,
# perplexity and bits per byte, eval from the checkpoint alone, generate
# reproducible by seed), a byte-level classifier on a text folder (accuracy,
# predict by class name, predict --text and stdin lines), and the errors:
# a vocabulary larger than the embedding, a text dataset for a model of
# numbers, the wrong kind of checkpoint for generate and predict --text, a
# checkpoint whose vocabulary does not fit its model.
set -u
cltrain=$1
. "$(dirname "$0")/../lib.sh"

python3 - "$tmp" <<'EOF'
import os, random, sys
tmp = sys.argv[1]
r = random.Random(7)
words = "the quick brown fox jumps over a lazy dog and then runs home again".split()
with open(f"{tmp}/lm.train", "w") as f:
    for _ in range(1500):
        f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
with open(f"{tmp}/words.txt", "w") as f:  # 600 distinct words
    f.write(" ".join(f"w{i}x" for i in range(600)) + "\n")
with open(f"{tmp}/lm.test", "w") as f:
    for _ in range(150):
        f.write(" ".join(r.choice(words) for _ in range(8)) + ".\n")
# two classes told apart by their letters: vowels-heavy words vs consonant runs
for split, n in (("train", 120), ("test", 30)):
    for c, alphabet in (("soft", "aeiouly"), ("hard", "bcdfgkptxz")):
        os.makedirs(f"{tmp}/td/{split}/{c}", exist_ok=True)
        for i in range(n):
            text = " ".join("".join(r.choice(alphabet) for _ in range(r.randint(2, 7)))
                            for _ in range(r.randint(3, 12)))
            open(f"{tmp}/td/{split}/{c}/{i}.txt", "w").write(text)
EOF

cat > "$tmp/lm.model" <<'EOF'
input tokens=32
embedding vocab=256 dim=16
lstm hidden=64
dense out=256
softmax_cross_entropy
EOF
cat > "$tmp/cls.model" <<'EOF'
input tokens=48
embedding vocab=256 dim=16
lstm hidden=32
seqpool mode=mean
dense out=2
softmax_cross_entropy
EOF

# 1. a byte-level language model: the test loss in nats per byte drops
#    below 1.6 in 4 epochs (measured ~1.1; the text's letters alone, without
#    their order, hold ~2.9 nats per byte), and the JSON log adds
#    perplexity = e^loss and bits per byte = loss / ln 2
lm=(--model "$tmp/lm.model" --data "text:$tmp/lm.train:seq=32:test=$tmp/lm.test" --batch 32 --lr 5e-3 --no-progress)
expect "language model trains" 0 "bits/byte" -- "$cltrain" train "${lm[@]}" --epochs 4 --out "$tmp/lm.st" --log "$tmp/lm.jsonl"
python3 - "$tmp/lm.jsonl" <<'EOF' && ok "nats per byte, perplexity and bits per byte" || bad "language-model figures"
import json, math, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
loss = r["test_loss"]
print(f"  test loss {loss:.4f} nats/byte, perplexity {r['perplexity']}, bits/byte {r['bits_per_byte']}")
assert loss < 1.6, loss
assert r["tokens"] == 32
assert abs(r["perplexity"] - math.exp(loss)) <= 1e-4 * math.exp(loss)
assert abs(r["bits_per_byte"] - loss / math.log(2)) < 1e-5
EOF
want=$(python3 -c "import json; print('%.4f' % json.loads(open('$tmp/lm.jsonl').read().splitlines()[-1])['test_loss'])")
expect "eval from the checkpoint alone" 0 "loss $want" -- "$cltrain" eval --weights "$tmp/lm.st" --data "text:$tmp/lm.train:seq=32:test=$tmp/lm.test"
gen=(generate --weights "$tmp/lm.st" --prompt "the quick" --length 60 --temperature 0.3)
"$cltrain" "${gen[@]}" --seed 5 > "$tmp/g1" 2>&1
"$cltrain" "${gen[@]}" --seed 5 > "$tmp/g2" 2>&1
"$cltrain" "${gen[@]}" --seed 6 > "$tmp/g3" 2>&1
if cmp -s "$tmp/g1" "$tmp/g2" && ! cmp -s "$tmp/g1" "$tmp/g3"; then ok "generate: the same seed, the same text"; else bad "generate is not reproducible by seed"; fi
# five samples pooled (seeds 5, 7, 8, 9, 10), so that one unlucky draw of
# a few words does not decide; at least 60% of their whole words must be
# the corpus'
for s in 7 8 9 10; do "$cltrain" "${gen[@]}" --seed $s > "$tmp/g$s" 2>&1; done
if python3 - "$tmp/g1" "$tmp/g7" "$tmp/g8" "$tmp/g9" "$tmp/g10" <<'EOF'; then ok "generate: the prompt, then 60 bytes of the corpus' words"; else bad "generate's text: $(head -c 80 "$tmp/g1")"; fi
import sys
words = set("the quick brown fox jumps over a lazy dog and then runs home again".split())
known = total = 0
for path in sys.argv[1:]:
    out = open(path, "rb").read()
    if not out.startswith(b"the quick") or len(out) != 9 + 60 + 1:
        sys.exit(f"  {out!r}: not the prompt, 60 bytes and a newline")
    text = out[9:69].decode("ascii", "replace")
    seen = [w.strip(".\n") for w in text.split()[1:-1]]
    known += sum(w in words for w in seen)
    total += len(seen)
    print(f"  {text!r}")
print(f"  {known} of {total} whole words are the corpus'")
sys.exit(0 if total and known >= 0.6 * total else 1)
EOF
expect "generate: greedy" 0 "" -- "$cltrain" generate --weights "$tmp/lm.st" --length 20 --temperature 0
expect "predict --text refuses a language model" 1 "language model.*generate" -- "$cltrain" predict --weights "$tmp/lm.st" --text "hi"

# 2. a byte-level classifier on a text folder: >= 90% (measured 100%)
expect "classifier trains" 0 "epoch 4/4" -- "$cltrain" train --model "$tmp/cls.model" --data "textdir:$tmp/td:seq=48" --epochs 4 --batch 16 --lr 1e-2 --no-progress --out "$tmp/cls.st" --log "$tmp/cls.jsonl"
acc=$(python3 -c "import json; print(json.loads(open('$tmp/cls.jsonl').read().splitlines()[-1])['test_accuracy'])")
if python3 -c "import sys; sys.exit(0 if $acc >= 0.9 else 1)"; then ok "classifier test accuracy $acc >= 0.9"; else bad "classifier test accuracy $acc < 0.9"; fi
expect "predict names the classes" 0 "^sample 0 label hard: (hard|soft) \(" -- "$cltrain" predict --weights "$tmp/cls.st" --data "textdir:$tmp/td:seq=48" --count 2 --top 2
expect "predict --text" 0 "^text 1: soft \(0\.[5-9]" -- "$cltrain" predict --weights "$tmp/cls.st" --text "aeio ouya eeoul" --top 2
printf 'kdpt bxzk gkt\naua eio\n' > "$tmp/lines"
expect "predict --text - reads lines" 0 "^text 2: soft" -- sh -c "\"$cltrain\" predict --weights \"$tmp/cls.st\" --text - < \"$tmp/lines\""
expect "generate refuses a classifier" 1 "text classifier.*predict --text" -- "$cltrain" generate --weights "$tmp/cls.st"

# 3. errors
expect "a vocabulary larger than the embedding" 1 "vocabulary of [0-9]+ token ids.*embedding.*takes 256" -- "$cltrain" train --model "$tmp/lm.model" --data "text:$tmp/words.txt:tokens=word:vocab=300:seq=32:test=$tmp/words.txt" --epochs 1 --no-progress
expect "text for a model of numbers" 1 "holds text.*input tokens=T" -- "$cltrain" train --model mlp --data "textdir:$tmp/td:seq=48" --epochs 1 --no-progress
expect "a text model on images" 1 "reads token sequences.*text:" -- "$cltrain" train --model "$tmp/cls.model" --data synthetic:1,8,8:2:64 --epochs 1 --no-progress
expect "a sequence length other than the model's" 1 "gives 40 tokens per sample but model .* takes 48" -- "$cltrain" train --model "$tmp/cls.model" --data "textdir:$tmp/td:seq=40" --epochs 1 --no-progress
# a checkpoint whose vocabulary (a word list of 300) no longer fits its model
python3 - "$tmp/lm.st" "$tmp/bad.st" <<'EOF'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
head = json.loads(data[8:8 + n])
words = ["<pad>", "<unk>"] + [f"w{i}" for i in range(298)]
head["__metadata__"]["tokens"] = json.dumps({"format": "cltrain-tokens", "version": 1, "tokens": "word", "words": words}, separators=(",", ":"))
h = json.dumps(head, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + data[8 + n:])
EOF
expect "a checkpoint's vocabulary that does not fit its model" 1 "bad.st: its vocabulary \(300 ids\).*do not match" -- "$cltrain" generate --weights "$tmp/bad.st"

finish test_text
