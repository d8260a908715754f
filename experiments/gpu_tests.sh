#!/bin/bash
# Every GPU test on the GPU machine in four pytest processes at once (about 250-360 s on the
# H100 machine's 16 cores, against about 950 s in one process); on a host with several GPUs the
# processes take one each. Run from the repository root:
#   TOTEM_DATA=$PWD/data_local bash experiments/gpu_tests.sh [LOGDIR]
# Each process's log goes to LOGDIR (default: a temporary folder); the summary lines are printed.
export PYTHONPATH=$PWD:$PYTHONPATH NUMBA_NUM_THREADS=${NUMBA_NUM_THREADS:-4}
logs=${1:-$(mktemp -d)}
mkdir -p "$logs"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
on() {  # on K CMD...: CMD on GPU K modulo the host's GPUs (every process on GPU 0 with one)
    local k=$1; shift
    if [ "$gpus" -gt 1 ]; then CUDA_VISIBLE_DEVICES=$((k % gpus)) "$@"; else "$@"; fi
}
on 0 python3 -m pytest -q -m gpu tests --ignore=tests/test_gpu.py > "$logs/t1.txt" 2>&1 &
on 1 python3 -m pytest -q -m gpu tests/test_gpu.py -k "real_graphs" > "$logs/t2.txt" 2>&1 &
on 2 python3 -m pytest -q -m gpu tests/test_gpu.py -k "streamed" > "$logs/t3.txt" 2>&1 &
on 3 python3 -m pytest -q -m gpu tests/test_gpu.py -k "not real_graphs and not streamed" \
    > "$logs/t4.txt" 2>&1 &
status=0
for job in $(jobs -p); do wait "$job" || status=1; done
for t in t1 t2 t3 t4; do echo "== $t"; tail -1 "$logs/$t.txt"; done
exit $status
