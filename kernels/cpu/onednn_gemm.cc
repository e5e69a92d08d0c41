#include "kernels/cpu/onednn_gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <map>
#include <tuple>

#include "kernels/cpu/async_signals_held.h"
#include "kernels/cpu/onednn_one_thread.h"
#include "kernels/cpu/onednn_route.h"

namespace sluice::kernels {

namespace {

// Everything a primitive depends on; alpha and beta are baked into it (output scale, sum post-op). The last field:
// a and b are bf16 (c stays f32), else all f32.
using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, float, float, bool>;

// One matmul primitive and the memory objects it runs on; the data pointers are set per call.
struct Entry {
  dnnl_primitive_t primitive = nullptr;  // null: oneDNN could not build it
  dnnl_memory_t src = nullptr, weights = nullptr, dst = nullptr;
  Entry() = default;
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry() { release(); }
  void release() {
    dnnl_memory_destroy(src);
    dnnl_memory_destroy(weights);
    dnnl_memory_destroy(dst);
    dnnl_primitive_destroy(primitive);
    src = weights = dst = nullptr;
    primitive = nullptr;
  }
};

// Per thread, so no locks: an engine, an in-order stream and the primitives built so far. Entries live as long
// as the thread; a run sees a handful of shapes.
struct Context {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::map<Key, Entry> entries;
  // Creates the engine and stream on first use, and again after a failure (memory, say): a failure is an error
  // for this call, never a lasting switch of this thread to OpenBLAS, which would give the blocks this thread
  // happens to run other bits than the rest.
  bool ready() {
    if (engine == nullptr && dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) engine = nullptr;
    if (engine != nullptr && stream == nullptr &&
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success) {
      stream = nullptr;
    }
    return stream != nullptr;
  }
  ~Context() {
    entries.clear();
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
  }
};

// A rows x cols operand, row-major with leading dimension ld, or the transpose of one stored cols x rows.
dnnl_memory_desc_t describe(int64_t rows, int64_t cols, int64_t ld, bool transposed, bool bf16 = false) {
  dnnl_memory_desc_t md;
  const dnnl_dims_t dims = {rows, cols};
  const dnnl_dims_t strides = {transposed ? 1 : ld, transposed ? ld : 1};
  dnnl_memory_desc_init_by_strides(&md, 2, dims, bf16 ? dnnl_bf16 : dnnl_f32, strides);
  return md;
}

dnnl_primitive_attr_t make_attr(float alpha, float beta) {
  dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return nullptr;
  bool ok = alpha == 1.0f || dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) == dnnl_success;
  if (ok && beta != 0.0f) {
    dnnl_post_ops_t post_ops = nullptr;
    ok = dnnl_post_ops_create(&post_ops) == dnnl_success && dnnl_post_ops_append_sum(post_ops, beta) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, post_ops) == dnnl_success;
    dnnl_post_ops_destroy(post_ops);
  }
  if (!ok) {
    dnnl_primitive_attr_destroy(attr);
    return nullptr;
  }
  return attr;
}

// Builds the primitive for `key` (called with the OpenMP thread count already set: oneDNN sizes its blocking
// for the threads it sees at creation). dnnl_unimplemented where oneDNN has no kernel for it (fixed per shape and
// machine); any other failure is transient (memory).
dnnl_status_t build(const Key& key, dnnl_engine_t engine, Entry& entry) {
  const auto [ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, bf16] = key;
  const dnnl_memory_desc_t a_md = describe(m, k, lda, ta, bf16), b_md = describe(k, n, ldb, tb, bf16),
                           c_md = describe(m, n, ldc, false);
  dnnl_matmul_desc_t desc;
  dnnl_status_t status = dnnl_matmul_desc_init(&desc, &a_md, &b_md, nullptr, &c_md);
  if (status != dnnl_success) return status;
  dnnl_primitive_attr_t attr = make_attr(alpha, beta);
  if (attr == nullptr) return dnnl_unimplemented;
  dnnl_primitive_desc_t pd = nullptr;
  status = dnnl_primitive_desc_create(&pd, &desc, attr, engine, nullptr);
  dnnl_primitive_attr_destroy(attr);
  if (status != dnnl_success) return status;
  status = dnnl_primitive_create(&entry.primitive, pd);
  if (status == dnnl_success) status = dnnl_memory_create(&entry.src, &a_md, engine, DNNL_MEMORY_NONE);
  if (status == dnnl_success) status = dnnl_memory_create(&entry.weights, &b_md, engine, DNNL_MEMORY_NONE);
  if (status == dnnl_success) status = dnnl_memory_create(&entry.dst, &c_md, engine, DNNL_MEMORY_NONE);
  dnnl_primitive_desc_destroy(pd);
  return status;
}

// At most this many shapes per thread: a run trains on a handful, but predicting batches of many sizes would
// otherwise keep one primitive (and its JIT code) per size forever. Dropping them all is harmless: a primitive
// rebuilt for the same key computes the same bits.
constexpr size_t kMaxCachedShapes = 64;

// The cached primitive for `key`, built on first use. `unimplemented` (oneDNN has no kernel for the shape: cached,
// not retried, so a shape never switches libraries mid-run) and other failures (not cached) give null.
Entry* find_or_build(Context& context, const Key& key, bool& unimplemented) {
  unimplemented = false;
  auto found = context.entries.find(key);
  if (found != context.entries.end()) {
    unimplemented = found->second.primitive == nullptr;
    return unimplemented ? nullptr : &found->second;
  }
  if (context.entries.size() >= kMaxCachedShapes) context.entries.clear();
  Entry& entry = context.entries[key];
  const dnnl_status_t status = build(key, context.engine, entry);
  if (status == dnnl_success) return &entry;
  entry.release();
  unimplemented = status == dnnl_unimplemented;
  if (!unimplemented) context.entries.erase(key);  // transient: the next call tries again
  return nullptr;
}

}  // namespace

GemmRoute gemm_route_on_this_machine() {
  static const GemmRoute route = [] {
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    const bool avx2 = (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2;
    const bool avx512 = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    return gemm_route_for(onednn_route_setting(), openblas_get_corename(), avx2, avx512);
  }();
  return route;
}

std::string cpu_products_text() {
  const char* core = openblas_get_corename();
  return std::string("OpenBLAS core ") + (core != nullptr ? core : "unknown") + ", products on " +
         gemm_route_text(gemm_route_on_this_machine());
}

namespace {

// oneDNN's name for an instruction set, as ONEDNN_MAX_CPU_ISA spells it (lower case).
const char* isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "none of oneDNN's x86 sets";
  }
}

}  // namespace

std::string onednn_bf16_gemm_missing() {
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  if ((isa & dnnl_cpu_isa_avx512_core_bf16) != dnnl_cpu_isa_avx512_core_bf16) {
    return std::string("this CPU lacks avx512_bf16 (oneDNN's instruction set here is ") + isa_name(isa) +
           "; ONEDNN_MAX_CPU_ISA caps it)";
  }
  if (!onednn_runtime_is_openmp()) return "this oneDNN is not built on OpenMP, so its thread count cannot be held at one";
  return "";
}

bool onednn_gemm_suits(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k) {
  return gemm_route_covers(gemm_route_on_this_machine(), transpose_a, transpose_b, m, n, k);
}

namespace {

// The matmul primitive for `key` (x W^T in f32, every orientation in bf16), cached per shape; it reads transposed
// operands through strides.
OnednnGemmResult run_matmul(const Key& key, const void* a, const void* b, float* c) {
  static thread_local Context context;
  if (!context.ready()) return OnednnGemmResult::kFailed;
  bool unimplemented = false;
  Entry* entry = find_or_build(context, key, unimplemented);
  if (entry == nullptr) return unimplemented ? OnednnGemmResult::kUnavailable : OnednnGemmResult::kFailed;
  dnnl_memory_set_data_handle(entry->src, const_cast<void*>(a));
  dnnl_memory_set_data_handle(entry->weights, const_cast<void*>(b));
  dnnl_memory_set_data_handle(entry->dst, c);
  const dnnl_exec_arg_t args[] = {
      {DNNL_ARG_SRC, entry->src}, {DNNL_ARG_WEIGHTS, entry->weights}, {DNNL_ARG_DST, entry->dst}};
  const AsyncSignalsHeld held;  // oneDNN's gemm-based kernels may run with the stack pointer in the heap
  const bool ran = dnnl_primitive_execute(entry->primitive, context.stream, 3, args) == dnnl_success &&
                   dnnl_stream_wait(context.stream) == dnnl_success;
  return ran ? OnednnGemmResult::kDone : OnednnGemmResult::kFailed;
}

}  // namespace

OnednnGemmResult onednn_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                             int64_t ldc) {
  // Without OpenMP's runtime oneDNN's thread count is not ours to hold at one (onednn_gemm_suits says why).
  if (!onednn_runtime_is_openmp()) return OnednnGemmResult::kUnavailable;
  OmpThreadsScope scope(1);  // whatever the host's OpenMP setting: one thread keeps the bits thread-count free
  // Measured per orientation (docs/BUILD_SETTINGS.md): the matmul primitive is the faster one for x W^T, oneDNN's
  // sgemm for dy W (and, on the fallback route, for the transposed-a products). All fixed by the shape.
  if (!transpose_a && transpose_b) {
    return run_matmul(Key{false, true, m, n, k, lda, ldb, ldc, alpha, beta, false}, a, b, c);
  }
  const AsyncSignalsHeld held;  // its generated kernels run with the stack pointer in the heap (async_signals_held.h)
  const dnnl_status_t status =
      dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return status == dnnl_success ? OnednnGemmResult::kDone : OnednnGemmResult::kFailed;
}

OnednnGemmResult onednn_gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                                  const uint16_t* a, int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c,
                                  int64_t ldc) {
  if (!onednn_runtime_is_openmp()) return OnednnGemmResult::kUnavailable;
  OmpThreadsScope scope(1);  // as onednn_gemm: one thread keeps the bits thread-count free
  return run_matmul(Key{transpose_a, transpose_b, m, n, k, lda, ldb, ldc, alpha, beta, true}, a, b, c);
}

}  // namespace sluice::kernels
