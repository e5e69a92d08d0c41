// sluice-mpirun-rank: Open MPI's fork agent under tools/sluice_mpirun.sh (`--mca orte_fork_agent`): mpirun starts
// every rank as `sluice-mpirun-rank PROGRAM ARGS...` and this process runs it as its child.
//
// Why: mpirun takes any non-zero exit as a failure. For a rank's 75 (stopped with a checkpoint, every rank at the
// same step) Open MPI 4.1 prints "Per user-direction, the job has been aborted." and stops the other ranks with
// SIGCONT, a sleep of odls_base_sigkill_timeout, SIGTERM, a second sleep, SIGKILL -- sleeping even when they have
// already exited, so it returned a minute late with the launcher's 30 s grace. Here a 75 becomes 0 and a file
// in $SLUICE_MPIRUN_STATUS_DIR, which the launcher turns back into its own exit status 75. Other statuses pass
// through unchanged, so a failing rank still ends the whole job at once.
//
// Signals mpirun sends to its child (USR1, the preemption warning, and its TERM/KILL sequence) are forwarded to
// the rank. A SIGKILL of this agent cannot be forwarded: the rank gets it from the kernel (PR_SET_PDEATHSIG).
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

volatile sig_atomic_t rank_pid = 0;  // 0 until forked, and in the child itself (kill(0) would hit the group)

void forward(int signal_number) {
  if (rank_pid > 0) kill(rank_pid, signal_number);
}

constexpr int kForwarded[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCONT, SIGALRM};

// The rank stopped with a checkpoint: leave a file for the launcher; false when there is no place for it (not
// under the launcher, or the directory is not writable), and 75 must then stay the exit status.
bool record_stop() {
  const char* directory = getenv("SLUICE_MPIRUN_STATUS_DIR");
  if (directory == nullptr || directory[0] == '\0') return false;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const std::string path = std::string(directory) + "/stopped." + host + "." + std::to_string(getpid());
  FILE* file = fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  const bool written = fputs("75\n", file) >= 0;
  return fclose(file) == 0 && written;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM ARGS... (Open MPI's fork agent, set by sluice_mpirun)\n", argv[0]);
    return 2;
  }
  // Handlers before the fork, so no signal between fork and waitpid takes its default action here.
  struct sigaction action = {};
  action.sa_handler = forward;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal_number : kForwarded) sigaction(signal_number, &action, nullptr);
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    perror("sluice-mpirun-rank: fork");
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);  // the agent died before prctl took effect
    execvp(argv[1], argv + 1);            // exec resets the handlers to their defaults
    fprintf(stderr, "sluice-mpirun-rank: cannot run %s: %s\n", argv[1], strerror(errno));
    _exit(127);
  }
  rank_pid = child;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("sluice-mpirun-rank: waitpid");
      return 1;
    }
  }
  if (WIFSIGNALED(status)) {
    // Die of the same signal, so mpirun reports what killed the rank.
    const int signal_number = WTERMSIG(status);
    signal(signal_number, SIG_DFL);
    kill(getpid(), signal_number);
    return 128 + signal_number;
  }
  const int code = WEXITSTATUS(status);
  if (code == 75 && record_stop()) return 0;
  return code;
}
