"""nvcc from a genrule: Bazel 4 has no CUDA rules, so each .cu becomes a PIC object that a cc_library links."""

# Targets that only exist under --config=cuda. Marking them incompatible (rather than leaving them out)
# makes `bazel build //...` skip them in the default build, so /usr/local/cuda is never touched there.
# Bazel 4.2's bundled @platforms has no :incompatible, hence a constraint value no platform declares.
CUDA_ONLY = select({
    "//:cuda_enabled": [],
    "//conditions:default": ["//kernels/cuda:not_a_cuda_build"],
})

NVCC = "/usr/local/cuda/bin/nvcc"

# sm_80 (A100) and sm_90 (H100/H200) machine code plus compute_90 PTX for newer GPUs to JIT.
# --fmad=false keeps a*b+c as two roundings, as the CPU path computes it (see docs/GPU.md).
NVCC_FLAGS = " ".join([
    "-std=c++17",
    "-O3",
    "--fmad=false",
    "-Xcompiler -fPIC",
    "-I.",
    "--generate-code arch=compute_80,code=sm_80",
    "--generate-code arch=compute_90,code=[sm_90,compute_90]",
])

def cuda_objects(name, srcs, hdrs):
    """One genrule per .cu file; returns the labels of the objects for a cc_library's srcs.

    Args:
      name: prefix of the genrule names.
      srcs: the .cu files.
      hdrs: every header the .cu files include (workspace-relative labels).
    """
    objects = []
    for src in srcs:
        stem = src[:-len(".cu")]
        native.genrule(
            name = name + "_" + stem,
            srcs = [src] + hdrs,
            outs = [stem + ".cu.o"],
            # nvcc names its temporary files after its pid, and inside the linux-sandbox's pid namespace every
            # action is pid 2 while /tmp is shared: two nvcc actions at once overwrote each other's
            # /tmp/tmpxft_00000002_* ("cannot open source file ...cpp4.ii", a failed CI run). Each action gets
            # its own TMPDIR, removed whether nvcc succeeds or not.
            cmd = ("NVCC_TMP=$$(mktemp -d) && " +
                   "{ TMPDIR=$$NVCC_TMP " + NVCC + " " + NVCC_FLAGS + " -c $(location " + src + ") -o $@; " +
                   "status=$$?; rm -rf $$NVCC_TMP; exit $$status; }"),
            target_compatible_with = CUDA_ONLY,
            tags = ["cuda"],
        )
        objects.append(":" + stem + ".cu.o")
    return objects
