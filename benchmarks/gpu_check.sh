#!/usr/bin/env bash
# Every GPU check in one run, for a session that is lent a GPU for a few minutes: the test
# suite's GPU cases (the op suite on "cuda", tests/test_gpu.py), the side-by-side training
# benchmark (CuPy vs PyTorch CUDA) and nanoGPT's GPU run (`--preset small`, val loss target
# 1.47). Each stage writes its output under $OUT (default gpu-check/) and a failing stage
# does not stop the later ones.
#
#   DATA=path/to/tinyshakespeare.txt bash benchmarks/gpu_check.sh
#
# A device call may last at most 10 minutes: run the stages in two calls, e.g.
#   STAGES="device tests bench" ... bash benchmarks/gpu_check.sh   (CuPy compiles kernels
#   on first use, so the tests may take minutes), then STAGES=train with TRAIN_TIMEOUT=540.
#
# Knobs (environment): STAGES (device tests bench train), DEVICE (cuda), DATA (the corpus;
# the machine may be offline),
# BENCH_PRESET (small), BENCH_STEPS (20), MAX_ITERS (5000, the preset's), TRAIN_TIMEOUT
# (seconds, 480), TRAIN_ARGS (more `train` flags). A dry run of the script itself on a CPU:
#   DEVICE=cpu BENCH_PRESET=baby BENCH_STEPS=2 MAX_ITERS=4 \
#   TRAIN_ARGS="--batch-size 2 --eval-iters 2 --eval-interval 2" bash benchmarks/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:-.}"
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-gpu-check}
DATA=${DATA:-../shared/data/tinyshakespeare.txt}
BENCH_PRESET=${BENCH_PRESET:-small}
BENCH_STEPS=${BENCH_STEPS:-20}
MAX_ITERS=${MAX_ITERS:-5000}
TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-480}
TRAIN_ARGS=${TRAIN_ARGS:-}
STAGES=" ${STAGES:-device tests bench train} "
mkdir -p "$OUT"
status=0

stage() {  # stage NAME COMMAND...: run (if in STAGES), keep its output, remember a failure
    local name=$1
    shift
    case "$STAGES" in *" $name "*) ;; *) return 0 ;; esac
    echo "== $name: $*"
    local start=$SECONDS
    "$@" >"$OUT/$name.txt" 2>&1
    local rc=$?
    tail -n 5 "$OUT/$name.txt"
    echo "== $name: exit $rc after $((SECONDS - start)) s"
    [ "$rc" -eq 0 ] || status=1
}

stage device python -c "import minigrad as mg; print(mg.randn(2, 2, device='$DEVICE').device)"
if [ "$DEVICE" = cuda ]; then
    stage tests python -m pytest -q -m gpu -p no:cacheprovider tests
fi
stage bench python benchmarks/bench_train.py --preset "$BENCH_PRESET" --device "$DEVICE" \
    --steps "$BENCH_STEPS" --warmup 2
stage train timeout "$TRAIN_TIMEOUT" python -m minitransformer train --preset small \
    --device "$DEVICE" --data "$DATA" --max-iters "$MAX_ITERS" --out "$OUT/small" $TRAIN_ARGS
if [ -f "$OUT/small/metrics.jsonl" ]; then
    echo "== metrics (iter, val loss, elapsed s):"
    python -c "
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    print(m['iter'], round(m['val_loss'], 4), round(m['elapsed_s'], 1))" "$OUT/small/metrics.jsonl"
fi
exit $status
