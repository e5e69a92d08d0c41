#!/bin/bash
# Builds the GPU binaries HERE (the GPU machine has no compiler cache and no package registry) and packs them
# into bench/gpu/carry/ (git-ignored by the lead? otherwise pass it as `carry`), together with every shared
# library they load that is not part of CUDA or glibc, so one `run` call with carry=["bench/gpu/carry"] can run
# them. Budget: a call carries 64 MiB; the project code is linked statically (--dynamic_mode=off) to stay small.
# CUDA itself (cudart, cuBLAS, NCCL: hundreds of MiB) is NOT carried: run_gpu_checks.sh expects it at
# /usr/local/cuda on the GPU machine and says so if it is missing.
# mpirun: carried as Debian packages unpacked with `dpkg -x` (see docs/GPU.md) when the GPU machine lacks it.
# NOT YET RUN end to end on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
carry=bench/gpu/carry
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib"
targets=(//tests/cuda:cuda_backend_test //tests/cuda:cuda_registry_test //tests/cuda:nccl_transport_test_bin
         //tests/cuda:staged_mpi_transport_test_bin //bench/gpu:mlp_step_bench)
bazel build --config=cuda --dynamic_mode=off -c opt "${targets[@]}"
for target in "${targets[@]}"; do
  path="bazel-bin/$(echo "${target#//}" | tr ':' '/')"
  cp "$path" "$carry/bin/"
done
# Shared libraries outside CUDA and glibc (Open MPI, OpenBLAS, HDF5, yaml-cpp, ...), resolved on this machine.
for binary in "$carry"/bin/*; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | grep -v -e '^/usr/local/cuda' -e '/libc\.so' -e '/libm\.so' -e '/libpthread' -e '/libdl\.so' \
  -e '/librt\.so' -e '/ld-linux' -e '/libstdc++' -e '/libgcc_s' | xargs -r cp -L -t "$carry/lib/"
cp bench/gpu/run_gpu_checks.sh bench/gpu/torch_mlp.py "$carry/"
du -sh "$carry"
size_kib=$(du -sk "$carry" | cut -f1)
if (( size_kib > 60 * 1024 )); then
  echo "pack_for_gpu.sh: $carry is ${size_kib} KiB, over the ~60 MiB that leaves room in a 64 MiB carry" >&2
  exit 1
fi
