#!/bin/bash
# One call of a lent GPU machine: runs the prebuilt GPU tests and benchmarks carried in a folder (made by
# bench/gpu/pack_for_gpu.sh) and writes every log and result under $OUT. Builds nothing: the GPU machine has
# no package registry. NOT YET RUN: written on a CPU-only machine; expect to fix paths on its first run.
#   run(command="bash bench/gpu/carry/run_gpu_checks.sh bench/gpu/carry", carry=["bench/gpu/carry"])
set -uo pipefail
carry="$(cd "${1:-bench/gpu/carry}" && pwd)"
out="${OUT:-$PWD/gpu_results}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$carry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
failures=0

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || echo "nvidia-smi failed"
  ls /usr/local/cuda/lib64/libcudart.so* /usr/local/cuda/lib64/libcublas.so* 2>&1
  ls /usr/local/cuda/lib/libnccl.so* /usr/local/cuda/lib64/libnccl.so* 2>&1
} > "$out/device.txt" 2>&1

run_step() {  # name, command...: logs to $out/<name>.log, counts failures
  local name="$1"
  shift
  echo "== $name: $*"
  if "$@" > "$out/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (exit $?)"; failures=$((failures + 1)); fi
  tail -3 "$out/$name.log"
}

mpi=(mpirun --allow-run-as-root --oversubscribe)
run_step cuda_registry_test "$carry/bin/cuda_registry_test"
run_step cuda_backend_test "$carry/bin/cuda_backend_test"
run_step nccl_transport_test "${mpi[@]}" -np 1 "$carry/bin/nccl_transport_test_bin"
run_step staged_mpi_transport_test "${mpi[@]}" -np 2 "$carry/bin/staged_mpi_transport_test_bin"
for precision in bf16 fp32; do
  run_step "mlp_step_bench_$precision" "$carry/bin/mlp_step_bench" --precision "$precision" --hidden 4096 --layers 8 \
    --rows 8192
done
run_step torch_mlp python3 "$carry/torch_mlp.py" --hidden 4096 --layers 8 --rows 8192

grep -h '^{' "$out"/mlp_step_bench_*.log "$out"/torch_mlp.log > "$out/results.jsonl" 2>/dev/null
cat "$out/results.jsonl" 2>/dev/null
echo "$failures step(s) failed"
exit $((failures > 0))
