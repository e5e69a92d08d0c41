"""Running one probe with a bound, and classifying how it ended (crash, hang, clear error, success)."""
import dataclasses
import os
import signal
import subprocess

# Text on stderr that means the process died or broke an invariant, whatever its exit status says.
CRASH_MARKERS = (
    "AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "terminate called", "Segmentation fault",
    "core dumped", "buffer overflow detected", "stack smashing", "double free", "please report",
    "std::bad_alloc", "Aborted",
)
# Open MPI's way of saying a rank died from a signal (mpirun itself exits 1 or the signal's status).
MPI_SIGNAL_MARKERS = ("exited on signal", "terminated with signal", "noticed that process rank")


@dataclasses.dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    timed_out: bool

    def crashed(self, signals_expected=False):
        if self.timed_out:
            return False
        if self.rc < 0 and not signals_expected:
            return True
        text = self.stderr + self.stdout
        if any(marker in text for marker in CRASH_MARKERS):
            return True
        return not signals_expected and any(marker in text for marker in MPI_SIGNAL_MARKERS)

    def clear_error(self):
        """A refusal that says what is wrong: non-zero status and a message line naming something."""
        return self.rc > 0 and any(line.strip() for line in self.stderr.splitlines())

    def first_error_line(self):
        for line in (self.stderr + self.stdout).splitlines():
            if "error" in line.lower():
                return line.strip()[:200]
        return (self.stderr.strip().splitlines() or [""])[-1][:200]


def run(cmd, timeout, env=None, cwd=None, memory_limit_bytes=None):
    """Runs cmd in its own process group; on timeout the whole group is killed (no stray ranks survive)."""
    def limit():
        os.setsid()
        if memory_limit_bytes:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                            env=env, cwd=cwd, preexec_fn=limit)
    try:
        out, err = proc.communicate(timeout=timeout)
        return Result(proc.returncode, out, err, False)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        out, err = proc.communicate()
        return Result(proc.returncode, out, err, True)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclasses.dataclass
class CampaignRow:
    name: str
    tried: int = 0
    crashes: int = 0
    hangs: int = 0
    silent: int = 0
    refused_clearly: int = 0
    refused_unclearly: int = 0
    accepted: int = 0
    harmless: int = 0
    lost_checkpoints: int = 0
    notes: list = dataclasses.field(default_factory=list)

    def as_dict(self):
        return dataclasses.asdict(self)

    def note(self, kind, description, result=None, keep_path=None):
        line = f"{kind}: {description}"
        if result is not None:
            line += f" -> rc {result.rc}{' (timed out)' if result.timed_out else ''}: {result.first_error_line()}"
        if keep_path:
            line += f" [kept: {keep_path}]"
        self.notes.append(line)


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def print_table(rows):
    print("| campaign | tried | crashes | hangs | silent acceptances | refused, clear message | refused, no message"
          " | accepted (valid input) | harmless corruption | no verifying checkpoint left |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.name} | {r.tried} | {r.crashes} | {r.hangs} | {r.silent} | {r.refused_clearly} | "
              f"{r.refused_unclearly} | {r.accepted} | {r.harmless} | {r.lost_checkpoints} |")
    for r in rows:
        for line in r.notes[:40]:
            print(f"  [{r.name}] {line}")
