#!/bin/bash
# One call of a lent GPU machine: unpacks the prebuilt GPU tests, `sluice` and the benchmarks that
# bench/gpu/pack_for_gpu.sh put in a carry folder, runs them, and writes under $OUT (the device tool returns at
# most 8 files from $OUT, so the per-step logs travel as one archive, rewritten after every step):
#   summary.txt                   one line per step: ok / FAILED (exit) / TIMEOUT, its first error, failed gtest
#                                 cases, every skip reason, and the "[gpu-vs-cpu]", "[field-gpu-vs-cpu]",
#                                 "[operator-ops]" and "[operator-gpu-vs-cpu]" numbers
#   device.txt                    GPU, driver, glibc, CUDA/NCCL libraries found, which mpirun, Python/PyTorch
#   results.jsonl                 the benchmarks' and `sluice train --json`'s final JSON lines
#   pipeline_gpu_vs_cpu_test.log  the whole-pipeline test's output (also in the archive)
#   logs.tar.gz                   logs/<step>.log, each step's whole output, and logs/<test>.xml, gtest's report
# Builds nothing: the GPU machine has no compiler, no package registry and no network.
#   run(command="bash bench/gpu/carry/run_gpu_checks.sh bench/gpu/carry", carry=["bench/gpu/carry"])
# Budget: a run command gets 600 s; every step's time limit is cut to what is left of SLUICE_GPU_DEADLINE_S
# (default 540) so that a hang in one step cannot cost the summary. Exit status: 0 when no step failed.
set -uo pipefail
readonly started=$SECONDS
readonly deadline_s="${SLUICE_GPU_DEADLINE_S:-540}"
carry="$(cd "${1:-bench/gpu/carry}" && pwd)"
out="${OUT:-$PWD/gpu_results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

# --- Unpack (the carry folder may be read-only) ------------------------------------------------------------------
work="$(mktemp -d /tmp/sg.XXXXXX)"  # short: Open MPI's session sockets live under it (108-byte path limit)
trap 'rm -rf "$work"' EXIT
logs="$work/logs"
mkdir -p "$logs"
if [[ -f "$carry/payload.tar.xz" ]]; then
  if command -v xz > /dev/null; then
    tar -C "$work" -xJf "$carry/payload.tar.xz"
  else  # Python (there for PyTorch) reads xz without the xz tool
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$carry/payload.tar.xz" "$work"
  fi || { note "FATAL: could not unpack $carry/payload.tar.xz"; exit 2; }
  root="$work"
else
  root="$carry"  # an unpacked layout (bin/ lib/ mpi/), e.g. while testing the kit
fi
bin="$root/bin"
# CUDA's libraries are not carried. The toolkit ships cudart and cuBLAS, not NCCL or cuDNN; the lent machines' image has
# NCCL (and may have the others) as pip wheels (nvidia-nccl-cu13 ...) beside PyTorch. Look for each library the
# binaries load in the usual places, then anywhere on the root file system.
library_dirs=()
wheel_dirs="$(timeout 30 python3 -c 'import glob, nvidia
print(" ".join(d for p in nvidia.__path__ for d in glob.glob(p + "/*/lib")))' 2> /dev/null)"
# cuDNN: libcudnn.so.9 loads its engine libraries (libcudnn_cnn.so.9 ...) from the same folder at run time.
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcufft.so.12 libcudnn.so.9 libnccl.so.2; do
  found=""
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
      /usr/lib/x86_64-linux-gnu $wheel_dirs; do
    [[ -e "$dir/$lib" ]] && { found="$dir"; break; }
  done
  # The whole disk as a last resort, bounded: the steps' time budget starts after this.
  [[ -z "$found" ]] && found="$(dirname "$(timeout 20 find / -xdev -name "$lib" -print -quit 2> /dev/null)" 2> /dev/null)"
  [[ -n "$found" && "$found" != "." ]] && library_dirs+=("$found")
  echo "$lib: ${found:-NOT FOUND}" >> "$work/libraries.txt"
done
cuda_libs="$(printf '%s\n' "${library_dirs[@]}" | awk '!seen[$0]++' | paste -sd: -)"
sluice_libs="$root/lib:$root/mpi/usr/lib/x86_64-linux-gnu:$root/mpi/lib/x86_64-linux-gnu${cuda_libs:+:$cuda_libs}"

# --- mpirun -----------------------------------------------------------------------------------------------------
# The carried Open MPI is preferred even where the machine has an mpirun: the binaries load the carried libmpi
# (Open MPI 4.1, Debian), and a launcher of another version or vendor need not speak to it. SLUICE_SYSTEM_MPIRUN=1
# uses the machine's instead. Relocation: Debian configured absolute paths (/etc/openmpi, the PMIx tree under
# /usr/lib/x86_64-linux-gnu/pmix2), so OPAL_PREFIX misses the MCA settings file and PMIx's plugins and help texts;
# OPAL_DESTDIR and PMIX_DESTDIR prefix every compiled-in path with the carried root instead (OPAL_PREFIX must then
# stay unset: both together double the prefix). PMIx's own settings file names its plugin folder absolutely, so
# that one is overridden too. Checked on the CPU machine with the system's Open MPI hidden (unshare -m).
mpi_root="$root/mpi"
if [[ -x "$mpi_root/usr/bin/orterun" && "${SLUICE_SYSTEM_MPIRUN:-0}" != 1 ]]; then
  mpirun_bin="$mpi_root/usr/bin/orterun"
  unset OPAL_PREFIX
  export OPAL_DESTDIR="$mpi_root" PMIX_DESTDIR="$mpi_root"
  export PMIX_MCA_mca_base_component_path="$mpi_root/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
  export PATH="$mpi_root/usr/bin:$PATH"
  mpi_source="carried Open MPI ($mpi_root)"
elif command -v mpirun > /dev/null; then
  mpirun_bin="$(command -v mpirun)"
  mpi_source="the machine's mpirun ($mpirun_bin)"
else
  mpirun_bin=""
  mpi_source="none: no carried Open MPI and no mpirun on PATH"
fi
# One node, launched without ssh (plm isolated: the ranks are children of mpirun), shared memory between ranks.
# Containers often forbid the cross-process reads (CMA) vader uses for large messages: copy through the segment.
mpi_session="$work/mpi"
mkdir -p "$mpi_session"
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_orte_tmpdir_base="$mpi_session" OMPI_MCA_btl_vader_backing_directory="$mpi_session"
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
mpi=("$mpirun_bin" --allow-run-as-root --oversubscribe --bind-to none)
export GTEST_COLOR=no  # under mpirun gtest sees a pty and would colour the logs
export SLUICE_REQUIRE_CUDA=1  # here a GPU test that skips (no usable GPU) is a failure, not an "ok"
export NCCL_DEBUG=WARN        # NCCL says why when it fails

# --- Device facts -----------------------------------------------------------------------------------------------
{
  echo "date: $(date -u +%FT%TZ)   host: $(hostname)   cores: $(nproc)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || echo "nvidia-smi failed"
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>&1)   payload needs: $(cat "$root/NEEDS" 2>/dev/null || echo '?')"
  echo "CUDA libraries found:"
  sed 's/^/  /' "$work/libraries.txt"
  echo "mpirun: $mpi_source"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  echo "unresolved libraries of the carried binaries:"
  for binary in "$bin"/*; do
    LD_LIBRARY_PATH="$sluice_libs" ldd "$binary" 2>&1 | sed -n "s|^\(.*not found\)|  $(basename "$binary"): \1|p"
  done
} > "$out/device.txt" 2>&1
if command -v nvidia-smi > /dev/null; then
  note "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
else
  note "device: no nvidia-smi on this machine"
fi
note "mpirun: $mpi_source"

# --- Steps ------------------------------------------------------------------------------------------------------
failures=0
run_step() {  # name limit_s command...: output to $logs/<name>.log; ok / FAILED / TIMEOUT to the summary
  local name="$1" limit="$2"
  shift 2
  local left=$((deadline_s - (SECONDS - started)))
  if ((left < 15)); then
    note "$name: NOT RUN (out of time)"
    failures=$((failures + 1))
    return
  fi
  ((limit > left)) && limit=$left
  echo "== $name (limit ${limit}s): $*"
  local begin=$SECONDS status
  GTEST_OUTPUT="xml:$logs/$name.xml" timeout -k 5 "$limit" "$@" > "$logs/$name.log" 2>&1
  status=$?
  if ((status == 0)); then
    note "$name: ok ($((SECONDS - begin)) s)"
  elif ((status == 124 || status == 137)); then
    note "$name: TIMEOUT after ${limit} s"
    failures=$((failures + 1))
  else
    note "$name: FAILED (exit $status, $((SECONDS - begin)) s)"
    failures=$((failures + 1))
    # Why, in one line, and which gtest cases failed (each once: every rank may report the same case).
    grep -m1 -E 'no CUDA device|[Ee]rror|Failure|not found|cannot|refuse' "$logs/$name.log" | cut -c1-300 |
      sed 's/^/    first error: /' | tee -a "$summary"
    grep -E '^\[  FAILED  \] [^0-9]' "$logs/$name.log" | sed 's/, where GetParam.*//' | sort -u | head -20 |
      sed 's/^/    /' | tee -a "$summary"
  fi
  # gtest's skip reasons and the whole-pipeline test's measured differences, once each.
  grep -h -A1 -e ': Skipped$' "$logs/$name.log" | grep -v -e ': Skipped$' -e '^--$' | sort | uniq -c |
    sed 's/^/    skipped: /' | tee -a "$summary"
  grep -h -e '^\[gpu-vs-cpu\]' -e '^\[field-gpu-vs-cpu\]' -e '^\[operator-ops\]' -e '^\[operator-gpu-vs-cpu\]' \
    "$logs/$name.log" | sed 's/^/    /' | tee -a "$summary"
  tail -3 "$logs/$name.log"
  tar -C "$work" -czf "$out/logs.tar.gz" logs  # after every step: a run killed later still returns these
}
# The carried libraries only for our binaries (an array, not a function: `timeout` runs programs).
with_libs=(env "LD_LIBRARY_PATH=$sluice_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
mpi_step() {  # name limit_s ranks command...
  local name="$1" limit="$2" ranks="$3"
  shift 3
  if [[ -z "$mpirun_bin" ]]; then
    note "$name: NOT RUN (no mpirun)"
    failures=$((failures + 1))
    return
  fi
  run_step "$name" "$limit" "${with_libs[@]}" "${mpi[@]}" -np "$ranks" "$@"
}

run_step sluice_loads 30 "${with_libs[@]}" "$bin/sluice" --help  # glibc and shared libraries, before anything bigger
mpi_step mpirun_works 60 4 "$bin/sluice" --help
run_step cuda_registry_test 60 "${with_libs[@]}" "$bin/cuda_registry_test"
# Launches synchronous: a faulting kernel is named by the op that launched it, not by a later one.
run_step cuda_backend_test 120 "${with_libs[@]}" CUDA_LAUNCH_BLOCKING=1 "$bin/cuda_backend_test"
# The cuDNN field ops against the CPU and run to run, then a field model trained on the GPU vs the CPU.
run_step cuda_field_ops_test 120 "${with_libs[@]}" CUDA_LAUNCH_BLOCKING=1 "$bin/cuda_field_ops_test"
mpi_step field_model_gpu_vs_cpu_test 120 2 "$bin/field_model_gpu_vs_cpu_test_bin" --gtest_catch_exceptions=0
# The cuFFT spectral convolution and the cuBLAS attention and token ops against the CPU, then FNO and ViT models
# trained on the GPU vs the CPU (issue 29; never run on a GPU before this kit).
run_step cuda_operator_ops_test 90 "${with_libs[@]}" CUDA_LAUNCH_BLOCKING=1 "$bin/cuda_operator_ops_test"
mpi_step operator_models_gpu_vs_cpu_test 120 2 "$bin/operator_models_gpu_vs_cpu_test_bin" --gtest_catch_exceptions=0
mpi_step nccl_transport_test 90 1 "$bin/nccl_transport_test_bin"
mpi_step staged_mpi_transport_test 90 2 "$bin/staged_mpi_transport_test_bin"
# An exception on one rank must end the job at once (mpirun aborts it), not leave the others in a collective
# until the time limit while gtest goes on to the next case.
mpi_step pipeline_gpu_vs_cpu_test 240 4 "$bin/pipeline_gpu_vs_cpu_test_bin" --gtest_catch_exceptions=0
cp "$logs/pipeline_gpu_vs_cpu_test.log" "$out/" 2> /dev/null
# The command line end to end: the README's 4-stage example on the CPU and on the GPU (4 ranks sharing it).
mpi_step sluice_train_cpu 60 4 "$bin/sluice" train "$carry/mlp.yaml" --json --set device=cpu
mpi_step sluice_train_cuda 60 4 "$bin/sluice" train "$carry/mlp.yaml" --json --set device=cuda \
  --set pipeline.transport=staged
for precision in bf16 fp32; do
  run_step "mlp_step_bench_$precision" 90 "${with_libs[@]}" "$bin/mlp_step_bench" --precision "$precision" \
    --hidden 4096 --layers 8 --rows 8192
done
# PyTorch runs with the machine's own libraries, not the carried ones.
run_step torch_mlp 90 python3 "$carry/torch_mlp.py" --hidden 4096 --layers 8 --rows 8192

# Last, as it is the slowest and least likely to matter: out-of-bounds and misaligned accesses that happen not
# to corrupt a result, in every backend op.
if [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
  run_step cuda_backend_memcheck 150 "${with_libs[@]}" /usr/local/cuda/bin/compute-sanitizer --tool memcheck \
    --error-exitcode 99 "$bin/cuda_backend_test"
  # The spectral and attention kernels' index maps, never run before this kit.
  run_step cuda_operator_ops_memcheck 120 "${with_libs[@]}" /usr/local/cuda/bin/compute-sanitizer --tool memcheck \
    --error-exitcode 99 "$bin/cuda_operator_ops_test"
else
  note "cuda_backend_memcheck, cuda_operator_ops_memcheck: NOT RUN (no /usr/local/cuda/bin/compute-sanitizer)"
fi

for name in mlp_step_bench_bf16 mlp_step_bench_fp32 torch_mlp sluice_train_cpu sluice_train_cuda; do
  grep -h '^{' "$logs/$name.log" 2> /dev/null | tail -1 | sed "s/^{/{\"step\": \"$name\", /"
done > "$out/results.jsonl"
cat "$out/results.jsonl"
# The issue's two ratios, from the lines above: GEMMs alone / Sluice step (goal >= 0.85) and Sluice step / PyTorch
# step (goal <= 1.0), both bf16 on this GPU.
python3 - "$out/results.jsonl" << 'PY' 2>&1 | tee -a "$summary"
import json, sys
rows = {}
for line in open(sys.argv[1]):
    try:
        row = json.loads(line)
        rows[row["step"]] = row
    except (ValueError, KeyError):
        pass
sluice, torch = rows.get("mlp_step_bench_bf16"), rows.get("torch_mlp")
if sluice:
    print("bf16 gemm_only/step = %.3f (goal >= 0.85); GEMM operand conversion = %.1f%% of the step" % (
        sluice["gemm_over_step"],
        100 * (sluice["gemm_with_conversion_seconds"] - sluice["gemm_only_seconds"]) / sluice["step_seconds"]))
if sluice and torch:
    print("bf16 sluice/torch step = %.3f (goal <= 1.0); peak memory sluice/torch = %.2f" % (
        sluice["step_seconds"] / torch["step_seconds"],
        sluice["peak_pool_bytes"] / max(torch.get("peak_allocated_bytes", 0), 1)))
PY
note "$failures step(s) failed; $((SECONDS - started)) s in all"
exit $((failures > 0))
