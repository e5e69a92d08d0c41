#!/bin/bash
# Builds the GPU binaries HERE (the GPU machine has no compiler, no package registry and no network) and packs
# them into bench/gpu/carry/ (git-ignored) so that ONE `run` call with carry=["bench/gpu/carry"] can run them:
#   carry/run_gpu_checks.sh, torch_mlp.py, mlp.yaml   plain files, run as they are
#   carry/payload.tar.xz                              bin/ (test binaries, benchmark, `sluice`), lib/ (the shared
#                                                     libraries they load outside CUDA and glibc), mpi/ (Open MPI)
# Why a compressed payload: a call carries at most 64 MiB, and OpenBLAS alone is 36 MiB unpacked; the test binaries
# also repeat the same statically linked project code, which xz's large window stores once.
# CUDA itself (cudart, cuBLAS, cuFFT, cuDNN, NCCL: hundreds of MiB) is NOT carried: run_gpu_checks.sh looks for each library
# on the GPU machine (/usr/local/cuda, system folders, PyTorch's nvidia/*/lib wheels) and records in device.txt
# where it found it.
# mpirun: Debian's Open MPI 4.1 packages, unpacked with `dpkg -x` into mpi/ and run relocated (OPAL_DESTDIR and
# PMIX_DESTDIR: run_gpu_checks.sh), so the launcher always matches the libmpi the binaries were linked against.
# Usage: bench/gpu/pack_for_gpu.sh [--no-build]   (--no-build packs what bazel-bin already holds)
set -euo pipefail
cd "$(dirname "$0")/../.."
readonly carry=bench/gpu/carry
readonly budget_kib=$((60 * 1024))  # leaves room under the 64 MiB carry limit for the working tree's own files
# Open MPI and what its launcher, libraries and the plugins we keep load (apt-cache depends + readelf, see below).
readonly mpi_packages=(openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7
                       libevent-pthreads-2.1-7 libmunge2 libudev1 zlib1g)
readonly targets=(//tests/cuda:cuda_backend_test //tests/cuda:cuda_registry_test //tests/cuda:nccl_transport_test_bin
                  //tests/cuda:staged_mpi_transport_test_bin //tests/cuda:pipeline_gpu_vs_cpu_test_bin
                  //tests/cuda:cuda_field_ops_test //tests/cuda:field_model_gpu_vs_cpu_test_bin
                  //tests/cuda:cuda_operator_ops_test //tests/cuda:operator_models_gpu_vs_cpu_test_bin
                  //bench/gpu:mlp_step_bench //tools/sluice:sluice)

# --define (what --config=cuda sets) does not change Bazel's output folder, so a plain `-c opt` build by anyone
# else would overwrite these binaries with their "built without --config=cuda" versions. A platform suffix gives
# the GPU pack an output folder of its own (bazel-out/k8-optgpu_pack); the libcudart check below still guards.
readonly build_flags=(--config=cuda --dynamic_mode=off -c opt --platform_suffix=gpu_pack)
if [[ "${1:-}" != "--no-build" ]]; then
  bazel build "${build_flags[@]}" "${targets[@]}"
fi
bin_dir="$(bazel info "${build_flags[@]}" bazel-bin 2>/dev/null)"

staging="$(mktemp -d /tmp/sluice_pack.XXXXXX)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/payload/bin" "$staging/payload/lib" "$staging/payload/mpi" "$staging/debs"

for target in "${targets[@]}"; do
  binary="$bin_dir/$(echo "${target#//}" | tr ':' '/')"
  [[ -x "$binary" ]] || { echo "pack_for_gpu.sh: $binary is missing: build without --no-build first" >&2; exit 1; }
  [[ "$(ldd "$binary")" == *libcudart.so* ]] ||
    { echo "pack_for_gpu.sh: $binary does not load libcudart: not a --config=cuda build" >&2; exit 1; }
  cp "$binary" "$staging/payload/bin/"
done
chmod u+w "$staging"/payload/bin/*
strip --strip-unneeded "$staging"/payload/bin/*

# --- Open MPI, relocatable -------------------------------------------------------------------------------------
# apt-get download fetches without installing; the local apt cache is the fallback when the mirror is unreachable.
(chmod 755 "$staging" && cd "$staging/debs" && chmod 777 . && apt-get download -q "${mpi_packages[@]}") || {
  echo "pack_for_gpu.sh: apt-get download failed; using /var/cache/apt/archives" >&2
  for package in "${mpi_packages[@]}"; do
    cp /var/cache/apt/archives/"${package}"_*_{amd64,all}.deb "$staging/debs/" 2>/dev/null || true
  done
}
for package in "${mpi_packages[@]}"; do
  compgen -G "$staging/debs/${package}_*.deb" > /dev/null ||
    { echo "pack_for_gpu.sh: no .deb for $package" >&2; exit 1; }
done
for deb in "$staging"/debs/*.deb; do dpkg -x "$deb" "$staging/payload/mpi"; done
mpi="$staging/payload/mpi"
rm -rf "$mpi"/usr/share/{man,doc,lintian,bug} "$mpi"/usr/share/openmpi/*wrapper-data.txt \
  "$mpi"/usr/lib/x86_64-linux-gnu/pkgconfig
rm -rf "$mpi"/lib/systemd "$mpi"/usr/lib/x86_64-linux-gnu/libmpi_cxx.so* "$mpi"/usr/lib/x86_64-linux-gnu/liboshmem.so*

# Drop every shared object that cannot load without a library we do not carry (interconnect plugins: UCX,
# libfabric, verbs, PSM, netlink; OpenSHMEM), repeating until nothing changes, because dropping a common library
# strands the plugins that need it. One GPU machine, one node: ranks talk over shared memory (btl self,vader).
system_libs='^(libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so'
while :; do
  carried="$(find "$mpi" -name '*.so*' \( -type f -o -type l \) -printf '%f\n' | sort -u)"
  dropped=0
  while IFS= read -r object; do
    for needed in $(readelf -d "$object" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      if ! grep -qxF "$needed" <<< "$carried" && ! grep -qE "$system_libs" <<< "$needed"; then
        rm -f "$object"
        dropped=$((dropped + 1))
        break
      fi
    done
  done < <(find "$mpi" -type f \( -name '*.so*' -o -path '*/bin/*' \))
  (( dropped > 0 )) || break
done
find "$mpi" -xtype l -delete  # links to what was dropped
while IFS= read -r object; do  # ELF files only: strip leaves a temp file behind when it fails on a script
  if [[ "$(head -c 4 "$object" | tail -c 3)" == ELF ]]; then strip --strip-unneeded "$object"; fi
done < <(find "$mpi" -type f \( -name '*.so*' -o -path '*/bin/*' \))
[[ -x "$mpi/usr/bin/orterun" ]] || { echo "pack_for_gpu.sh: orterun did not survive packing" >&2; exit 1; }

# --- Shared libraries of our binaries ---------------------------------------------------------------------------
# Everything outside CUDA (expected on the GPU machine) and glibc/libstdc++ (must match the machine's loader;
# device.txt records the machine's glibc), and not already carried in mpi/.
for binary in "$staging"/payload/bin/*; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | grep -v -e '^/usr/local/cuda' -e '/libc\.so' -e '/libm\.so' -e '/libpthread' -e '/libdl\.so' \
  -e '/librt\.so' -e '/libresolv\.so' -e '/ld-linux' -e '/libstdc++' -e '/libgcc_s' | while IFS= read -r library; do
  name="$(basename "$library")"
  [[ -e "$mpi/usr/lib/x86_64-linux-gnu/$name" || -e "$mpi/lib/x86_64-linux-gnu/$name" ]] ||
    cp -L "$library" "$staging/payload/lib/"
done
chmod u+w "$staging"/payload/lib/*

# The newest glibc / libstdc++ symbol versions anything carried asks for; run_gpu_checks.sh prints them beside the
# GPU machine's glibc, which must be at least as new (glibc and libstdc++ are not carried: they belong to the loader).
{ find "$staging/payload" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec objdump -T {} + 2>/dev/null || true; } |
  grep -oE '(GLIBC|GLIBCXX)_[0-9.]+' | sort -uV |
  awk -F_ '{newest[$1] = $0} END {print newest["GLIBC"], newest["GLIBCXX"]}' \
  > "$staging/payload/NEEDS"
echo "payload needs: $(cat "$staging/payload/NEEDS")"

# --- Pack -------------------------------------------------------------------------------------------------------
echo "unpacked payload:"
du -sh "$staging"/payload/{bin,lib,mpi}
du -sh "$staging"/payload/bin/* "$staging"/payload/lib/* | sort -h | tail -8
rm -rf "$carry"
mkdir -p "$carry"
# -9e with a 192 MiB window: the whole payload fits in one window, so the binaries' shared code is stored once.
tar -C "$staging/payload" -cf - NEEDS bin lib mpi | xz -T1 --lzma2=preset=9e,dict=192MiB > "$carry/payload.tar.xz"
cp bench/gpu/run_gpu_checks.sh bench/gpu/torch_mlp.py examples/configs/mlp.yaml "$carry/"
echo "carry:"
ls -l "$carry"
du -sh "$carry"
size_kib=$(du -sk "$carry" | cut -f1)
if (( size_kib > budget_kib )); then
  echo "pack_for_gpu.sh: $carry is ${size_kib} KiB, over the ${budget_kib} KiB that leaves room in a 64 MiB carry" >&2
  exit 1
fi
