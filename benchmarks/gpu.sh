#!/usr/bin/env bash
# The checks that need a CUDA GPU, in one run (for the device tool's machine; see the
# developers' notes). Writes its logs and figures under $OUT (default: ./gpu-out).
#
#   bash benchmarks/gpu.sh            # after `python3 run.py --version` made .venv
#
# 1. the unit tests of the model and the training loop, with CUDA visible;
# 2. train_speed.py on CUDA in fp32 (TF32 allowed, as in training) and bf16 (images/s, matmul peak);
# 3. one full MNIST epoch per precision with `capsviz train` (wall time from its log);
# 4. with the time left (MM_SECONDS, default 300), a MultiMNIST run in bf16, widened from
#    the shipped MNIST model (or resumed from $MM_RESUME), stopped with Ctrl+C's clean
#    autosave; the autosave and the best epoch are left under $OUT/multimnist*.safetensors.
# CAPSVIZ_DATA must point at the MNIST archives.
set -u
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
PY="${PYTHON:-.venv/bin/python}"
export QT_QPA_PLATFORM=offscreen

"$PY" -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))" | tee "$OUT/device.txt"
"$PY" -m pytest -q tests/unit/test_model.py tests/unit/test_train.py tests/unit/test_precision.py \
    > "$OUT/tests.txt" 2>&1
tail -n 3 "$OUT/tests.txt"

for precision in fp32 bf16; do
    "$PY" benchmarks/train_speed.py --device cuda --precision "$precision" --steps 20 --warmup 5 \
        > "$OUT/train_speed_$precision.txt" 2>&1
    tail -n 1 "$OUT/train_speed_$precision.txt"
done

for precision in fp32 bf16; do
    start=$(date +%s.%N)
    "$PY" -m capsviz train --device cuda --precision "$precision" --epochs 1 --overwrite \
        --out "$OUT/epoch_$precision.safetensors" > "$OUT/epoch_$precision.txt" 2>&1
    end=$(date +%s.%N)
    echo "one MNIST epoch in $precision (with the test pass and the save): $(echo "$end - $start" | bc) s" \
        | tee -a "$OUT/epochs.txt"
    rm -f "$OUT/epoch_$precision.safetensors" "$OUT/epoch_$precision.best.safetensors"
done

mm_out="$OUT/multimnist.safetensors"
if [ -n "${MM_RESUME:-}" ]; then
    mm_args=(--resume "$MM_RESUME" --out "$mm_out")
else
    mm_args=(--dataset multimnist --init assets/capsnet_mnist.safetensors --out "$mm_out" --overwrite
             --epochs 30 --batch-size 128 --lr 1e-3 --lr-decay 0.5 --lr-decay-steps 4000 --test-subset 2000)
fi
"$PY" -m capsviz train --device cuda --precision bf16 "${mm_args[@]}" > "$OUT/multimnist.txt" 2>&1 &
mm_pid=$!
sleep "${MM_SECONDS:-300}"
kill -INT "$mm_pid"  # the first Ctrl+C: stop after the current step and autosave
wait "$mm_pid"
grep -a "epoch .*test accuracy\|stopped at\|finished at" "$OUT/multimnist.txt" | tail -n 5
