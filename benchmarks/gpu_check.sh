#!/usr/bin/env bash
# Every GPU check in one run, for a session that is lent a GPU for a few minutes: the test
# suite's GPU cases (tests/test_gpu.py first, then the op suite on "cuda"), the side-by-side training
# benchmark (CuPy vs PyTorch CUDA) in float32 and then in float16 mixed precision (autocast +
# GradScaler on both sides: bench16), mg.profiler's table of one small-preset step (where the
# GPU's time goes, op by op) and nanoGPT's GPU run (`--preset small`, val loss target
# 1.47). Each stage writes its output under $OUT (default gpu-check/) and a failing stage
# does not stop the later ones.
#
#   DATA=path/to/tinyshakespeare.txt bash benchmarks/gpu_check.sh
#
# Each stage has its own time limit, and the defaults add up to under 10 minutes, so the
# whole check fits one call of a machine lent for a few minutes: tests first (CuPy compiles
# each kernel on first use and caches it, so the later stages start warm), then the
# benchmarks, then the training run, which writes its val loss every 250 steps, so a run cut
# short still shows how far it got in how long. A longer lease: STAGES=train TRAIN_TIMEOUT=580.
#
# Knobs (environment): STAGES (device gputests tests bench bench16 profile train), DEVICE
# (cuda), DATA (the corpus; the machine may be offline: copy it into the tree),
# GPU_TESTS_TIMEOUT (60 s: the GPU's own tests, whole even where the op suite runs out of
# time), TESTS_TIMEOUT (100 s), BENCH_PRESET (small), BENCH_STEPS (10), BENCH_TIMEOUT
# (80 s), BENCH16_TIMEOUT (60 s: the same benchmark, --dtype float16), PROFILE_TIMEOUT
# (30 s), MAX_ITERS (5000, the preset's), TRAIN_TIMEOUT (250 s), TRAIN_ARGS (more `train`
# flags, e.g. --matmul-precision highest). The train stage runs in float32 unless
# TRAIN_ARGS="--dtype float16": mixed precision, the faster way to nanoGPT's val loss 1.47 on
# a GPU (bench16 says by how much). The defaults sum to 580 s (bench16 came in at 60 s;
# BENCH_TIMEOUT went from 100 to 80 s and TRAIN_TIMEOUT from 290 to 250 s to make room).
# A dry run of the script itself on a CPU (float16 is slow there: NumPy has no float16
# BLAS, so bench16 gets more time):
#   DEVICE=cpu BENCH_PRESET=baby BENCH_STEPS=2 MAX_ITERS=4 BENCH16_TIMEOUT=300 \
#   TRAIN_ARGS="--batch-size 2 --eval-iters 2 --eval-interval 2" bash benchmarks/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:-.}"
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-gpu-check}
# the device machine gets the tree but not ../shared: carry a copy in an ignored folder
# (mkdir gpu-data; cp ../shared/data/tinyshakespeare.txt gpu-data/; echo /gpu-data/ >>
# .git/info/exclude; then run with carry=["gpu-data"])
if [ -z "${DATA:-}" ]; then
    DATA=../shared/data/tinyshakespeare.txt
    [ -f "$DATA" ] || DATA=gpu-data/tinyshakespeare.txt
fi
BENCH_PRESET=${BENCH_PRESET:-small}
BENCH_STEPS=${BENCH_STEPS:-10}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-80}
BENCH16_TIMEOUT=${BENCH16_TIMEOUT:-60}
GPU_TESTS_TIMEOUT=${GPU_TESTS_TIMEOUT:-60}
TESTS_TIMEOUT=${TESTS_TIMEOUT:-100}
PROFILE_TIMEOUT=${PROFILE_TIMEOUT:-30}
MAX_ITERS=${MAX_ITERS:-5000}
TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-250}
TRAIN_ARGS=${TRAIN_ARGS:-}
STAGES=" ${STAGES:-device gputests tests bench bench16 profile train} "
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

case "$STAGES" in *" train "*)
    if [ ! -f "$DATA" ]; then   # said now, not after the minutes the tests take
        # the other stages still run: a lent GPU's minutes are too few to spend on nothing
        echo "warning: DATA=$DATA is not a file, so the train stage is skipped (copy the" \
             "corpus into the tree, see above, and pass its path)"
        STAGES=${STAGES/ train / }
        status=1
    fi ;;
esac
stage device python -c "import minigrad as mg; xp = mg.backend.get('$DEVICE').xp
print(mg.randn(2, 2, device='$DEVICE').device, xp.__name__, getattr(xp, '__version__', ''))"
if [ "$DEVICE" = cuda ]; then
    stage gputests timeout "$GPU_TESTS_TIMEOUT" python -m pytest -q -p no:cacheprovider \
        tests/test_gpu.py
    stage tests timeout "$TESTS_TIMEOUT" python -m pytest -q -m gpu -p no:cacheprovider \
        --ignore=tests/test_gpu.py tests
fi
stage bench timeout "$BENCH_TIMEOUT" python benchmarks/bench_train.py \
    --preset "$BENCH_PRESET" --device "$DEVICE" --steps "$BENCH_STEPS" --warmup 2
stage bench16 timeout "$BENCH16_TIMEOUT" python benchmarks/bench_train.py \
    --preset "$BENCH_PRESET" --device "$DEVICE" --steps "$BENCH_STEPS" --warmup 2 \
    --dtype float16
stage profile timeout "$PROFILE_TIMEOUT" python benchmarks/profile_step.py \
    --preset "$BENCH_PRESET" --device "$DEVICE" --steps 2 --warmup 1 --rows 30
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
