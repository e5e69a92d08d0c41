// Signals during a training step's routed GEMMs (issue 25): SIGUSR1 is sent over and over to both threads of a
// 2-thread rank while a stage of 512-wide linear layers runs 20 forward/backward steps whose products take the
// oneDNN route (forced on with SLUICE_ONEDNN_GEMM=on, so this runs on any x86 CPU) and are cut into thread
// blocks.
//
// What it catches: a library kernel that runs with the stack pointer outside its thread's stack. oneDNN 2.6's
// generated GEMM kernels point it into a heap workspace; a signal then writes its frame into the heap and glibc
// aborts later ("corrupted size vs. prev_size", 5 of 18 train_resume_test runs). Rather than wait for that, the
// handler here reads the interrupted stack pointer and fails at once, naming it, so the test fails on every run of
// the old code, under ASan too. Sluice holds asynchronous signals back while such a kernel runs
// (kernels/cpu/async_signals_held.h); a held signal is taken when the product ends, on the thread's own stack.
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core/model/builder.h"
#include "core/model/stage_module.h"
#include "gtest/gtest.h"
#include "kernels/cpu/blas_threads.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/parallel_blocks.h"
#include "tests/kernels/random_tensor.h"

namespace sluice::kernels {
namespace {

constexpr int kThreads = 2;
constexpr int kWidth = 512;
constexpr int kRows = 256;  // per micro-batch: dy W is 256 x 512 x 512, cut into two column blocks
constexpr int kSteps = 20;
constexpr int kMicrobatches = 2;

// The stack of each thread that computes blocks, noted before any signal is sent.
thread_local uintptr_t t_stack_low = 0;
thread_local uintptr_t t_stack_high = 0;
std::atomic<int64_t> g_on_stack{0};
std::atomic<int64_t> g_unknown_thread{0};

std::mutex g_threads_mutex;
std::vector<pthread_t> g_block_threads;

void note_this_threads_stack() {
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_getattr_np(pthread_self(), &attributes), 0);
  void* low = nullptr;
  size_t size = 0;
  ASSERT_EQ(pthread_attr_getstack(&attributes, &low, &size), 0);
  pthread_attr_destroy(&attributes);
  t_stack_low = reinterpret_cast<uintptr_t>(low);
  t_stack_high = t_stack_low + size;
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  g_block_threads.push_back(pthread_self());
}

// Async-signal-safe: atomics, thread-locals of the executable, write and _exit.
extern "C" void check_interrupted_stack(int /*signal*/, siginfo_t* /*info*/, void* context) {
#if defined(__x86_64__)
  const auto rsp = static_cast<uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RSP]);
  if (t_stack_high == 0) {
    g_unknown_thread.fetch_add(1);
    return;
  }
  if (rsp >= t_stack_low && rsp < t_stack_high) {
    g_on_stack.fetch_add(1);
    return;
  }
  char message[256];
  const int length = std::snprintf(message, sizeof message,
                                   "FAILED: a signal interrupted a thread whose stack pointer 0x%" PRIxPTR
                                   " lay outside its stack [0x%" PRIxPTR ", 0x%" PRIxPTR
                                   "): the signal frame went into the heap\n",
                                   rsp, t_stack_low, t_stack_high);
  if (length > 0) (void)!write(STDERR_FILENO, message, static_cast<size_t>(length));
  _exit(3);
#else
  (void)context;
#endif
}

// Sends SIGUSR1 to every block thread in turn until stopped; holds every signal itself.
class SignalSender {
 public:
  SignalSender() : thread_([this] { run(); }) {}
  ~SignalSender() {
    stop_ = true;
    thread_.join();
  }
  int64_t sent() const { return sent_; }

 private:
  void run() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    while (!stop_) {
      for (pthread_t target : g_block_threads) {
        if (pthread_kill(target, SIGUSR1) == 0) ++sent_;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sent_{0};
  std::thread thread_;
};

config::LayerSpec layer(const char* type, int64_t outputs = 0) {
  config::LayerSpec spec;
  spec.type = config::find_layer_type(type).value();
  spec.outputs = outputs;
  return spec;
}

config::ModelSpec wide_mlp() {
  config::ModelSpec spec;
  spec.inputs = kWidth;
  spec.layers = {layer("linear", kWidth), layer("relu"), layer("linear", kWidth), layer("relu"),
                 layer("linear", kWidth)};
  return spec;
}

TEST(RoutedGemmSignalTest, SignalsDuringTwoThreadRoutedProductsLeaveEveryStackPointerOnItsStack) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "reads the interrupted stack pointer from an x86-64 signal context";
#endif
  ASSERT_EQ(setenv("SLUICE_ONEDNN_GEMM", "on", 1), 0);  // before the first product of this process
  ASSERT_TRUE(onednn_gemm_suits(false, false, kRows, kWidth, kWidth)) << "dy W must take the oneDNN route";
  ASSERT_TRUE(onednn_gemm_suits(false, true, kRows, kWidth, kWidth)) << "x W^T must take the oneDNN route";
  set_blas_thread_count(kThreads);
  // The team that runs the blocks is OpenMP's thread pool, which keeps its threads between products.
  run_blocks(kThreads, kThreads, [](int64_t) { note_this_threads_stack(); });
  ASSERT_EQ(g_block_threads.size(), static_cast<size_t>(kThreads)) << "the blocks did not run on two threads";

  struct sigaction action {};
  action.sa_sigaction = check_interrupted_stack;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  // Installed for the rest of the process: a signal sent just before the sender stopped may still be pending on a
  // thread that has not run since, and must not meet the default action (which ends the process).
  ASSERT_EQ(sigaction(SIGUSR1, &action, nullptr), 0);

  auto layers = model::build_layers(wide_mlp(), cpu_backend());
  model::init_layers(layers, 5);
  model::StageModule stage(cpu_backend(), 0, std::move(layers), {}, true, /*skip_model_input_grad=*/false);
  int64_t sent = 0;
  {
    SignalSender sender;
    for (int step = 0; step < kSteps; ++step) {
      for (int mb = 0; mb < kMicrobatches; ++mb) {
        const model::StepInfo info{1, static_cast<uint64_t>(step), true, static_cast<uint64_t>(mb) * kRows};
        stage.forward(mb, random_tensor(kRows, kWidth, 10 * step + mb), info);
      }
      for (int mb = 0; mb < kMicrobatches; ++mb) {
        const Tensor dx = stage.backward(mb, random_tensor(kRows, kWidth, 1000 + 10 * step + mb));
        ASSERT_EQ(dx.rows(), kRows);
      }
    }
    sent = sender.sent();
  }
  // Signals held back during a product arrive when it ends, so every one lands on its thread's stack. Enough must
  // have landed for the run to mean something.
  EXPECT_GT(sent, 200) << "too few signals were sent to test anything";
  EXPECT_GT(g_on_stack.load(), 200) << "too few signals reached the block threads";
  EXPECT_EQ(g_unknown_thread.load(), 0) << "a signal went to a thread whose stack was not noted";
  set_blas_thread_count(1);
}

}  // namespace
}  // namespace sluice::kernels
