#include "core/comm/agreement.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/comm/request_wait.h"

namespace sluice::comm {
namespace {

// Messages travel whole up to this size; a longer one (a 20 MB path echoed in an error) is cut with a note
// saying so, never silently.
constexpr size_t kLongestMessage = 16384;

// One rank's contribution to a call.
struct Report {
  uint64_t sequence = 0;
  std::string what;
  bool failed = false;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// What rank 0 decided. kind: 0 all succeeded, 1 a rank failed (origin), 2 protocol failure (timeout, out of step).
struct Wire {
  uint64_t sequence = 0;
  int64_t kind = 0;
  ErrorCode code = ErrorCode::kInternal;
  int64_t origin = -1;
  std::string message;
  Decision decision;  // rank 0's, when the call carries one (agree_on_decision); empty otherwise
};

std::string bounded(const std::string& text) {
  if (text.size() <= kLongestMessage) return text;
  return text.substr(0, kLongestMessage) + "... [" + std::to_string(text.size() - kLongestMessage) +
         " more characters]";
}

void put(std::vector<char>& out, int64_t value) {
  const char* p = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

void put(std::vector<char>& out, const std::string& text) {
  put(out, static_cast<int64_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

// Reads from a received buffer; any inconsistency makes the message unusable (ok() false), never a crash.
class Reader {
 public:
  explicit Reader(const std::vector<char>& bytes) : bytes_(bytes) {}
  int64_t number() {
    int64_t value = 0;
    if (at_ + sizeof value > bytes_.size()) return fail();
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string text() {
    const int64_t length = number();
    if (length < 0 || static_cast<size_t>(length) > bytes_.size() - at_) return fail(), std::string();
    std::string out(bytes_.data() + at_, static_cast<size_t>(length));
    at_ += static_cast<size_t>(length);
    return out;
  }
  std::vector<int64_t> numbers() {
    const int64_t count = number();
    // A count the buffer cannot hold is a corrupt message, not a reason to allocate.
    if (count < 0 || static_cast<size_t>(count) > (bytes_.size() - at_) / sizeof(int64_t)) {
      fail();
      return {};
    }
    std::vector<int64_t> out;
    for (int64_t i = 0; i < count; ++i) out.push_back(number());
    return out;
  }
  bool ok() const { return ok_; }

 private:
  int64_t fail() {
    ok_ = false;
    at_ = bytes_.size();
    return 0;
  }
  const std::vector<char>& bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

std::vector<char> encode(const Report& r) {
  std::vector<char> out;
  put(out, static_cast<int64_t>(r.sequence));
  put(out, r.what);
  put(out, r.failed ? 1 : 0);
  put(out, static_cast<int64_t>(r.code));
  put(out, r.message);
  return out;
}

std::optional<Report> decode_report(const std::vector<char>& bytes) {
  Reader in(bytes);
  Report r;
  r.sequence = static_cast<uint64_t>(in.number());
  r.what = in.text();
  r.failed = in.number() != 0;
  r.code = static_cast<ErrorCode>(in.number());
  r.message = in.text();
  if (!in.ok()) return std::nullopt;
  return r;
}

std::vector<char> encode(const Wire& w) {
  std::vector<char> out;
  put(out, static_cast<int64_t>(w.sequence));
  put(out, w.kind);
  put(out, static_cast<int64_t>(w.code));
  put(out, w.origin);
  put(out, w.message);
  put(out, static_cast<int64_t>(w.decision.numbers.size()));
  for (const int64_t n : w.decision.numbers) put(out, n);
  put(out, w.decision.text);
  return out;
}

std::optional<Wire> decode_wire(const std::vector<char>& bytes) {
  Reader in(bytes);
  Wire w;
  w.sequence = static_cast<uint64_t>(in.number());
  w.kind = in.number();
  w.code = static_cast<ErrorCode>(in.number());
  w.origin = in.number();
  w.message = in.text();
  w.decision.numbers = in.numbers();
  w.decision.text = in.text();
  if (!in.ok()) return std::nullopt;
  return w;
}

// The per-communicator call counter lives on the communicator itself (an MPI attribute), so every caller of
// agree() on that communicator shares one sequence without threading a counter through the code.
extern "C" int release_sequence(MPI_Comm, int, void* value, void*) {
  delete static_cast<uint64_t*>(value);
  return MPI_SUCCESS;
}

int g_sequence_keyval = MPI_KEYVAL_INVALID;

// MPI deletes MPI_COMM_SELF's attributes first thing in MPI_Finalize: the hook frees the keyval then.
extern "C" int free_sequence_keyval(MPI_Comm, int, void*, void*) {
  MPI_Comm_free_keyval(&g_sequence_keyval);
  return MPI_SUCCESS;
}

int sequence_keyval() {
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_sequence, &g_sequence_keyval, nullptr);
    int cleanup = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_sequence_keyval, &cleanup, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, cleanup, nullptr);
    MPI_Comm_free_keyval(&cleanup);  // the attribute stays until MPI_Finalize deletes it
  });
  return g_sequence_keyval;
}

uint64_t next_sequence(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, sequence_keyval(), &value, &found);
  if (!found) {
    value = new uint64_t(0);
    MPI_Comm_set_attr(comm, sequence_keyval(), value);
  }
  return ++*static_cast<uint64_t*>(value);
}

// Receives one message from `source` with `tag` if one is waiting; nullopt if none is (yet).
std::optional<std::vector<char>> try_receive(MPI_Comm comm, int source, int tag) {
  int waiting = 0;
  MPI_Status status;
  if (MPI_Iprobe(source, tag, comm, &waiting, &status) != MPI_SUCCESS) {
    throw Error(ErrorCode::kComm, "MPI_Iprobe failed in the failure agreement");
  }
  if (!waiting) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<char> bytes(static_cast<size_t>(count));
  if (MPI_Recv(bytes.data(), count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    throw Error(ErrorCode::kComm, "MPI_Recv failed in the failure agreement");
  }
  return bytes;
}

// "3", "2.5": a deadline as the config wrote it, not "3.000000".
std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Rank 0: waits for every rank's report of this call. Reports of earlier calls (left behind by a rank that
// arrived after an earlier timeout) are dropped; a missing entry means the rank did not report in time.
std::vector<std::optional<Report>> collect_reports(MPI_Comm comm, int size, uint64_t sequence, Report mine,
                                                   const Deadline& deadline) {
  std::vector<std::optional<Report>> reports(static_cast<size_t>(size));
  reports[0] = std::move(mine);
  int missing = size - 1;
  auto poll = [&] {
    for (int r = 1; r < size; ++r) {
      while (!reports[r]) {
        std::optional<std::vector<char>> bytes = try_receive(comm, r, kAgreementReportTag);
        if (!bytes) break;
        std::optional<Report> report = decode_report(*bytes);
        if (!report) throw Error(ErrorCode::kComm, "unreadable failure-agreement report from rank " + std::to_string(r));
        if (report->sequence < sequence) continue;  // stale: an earlier call this rank reached too late
        reports[r] = std::move(report);
        --missing;
      }
    }
    return missing == 0;
  };
  wait_until(poll, deadline, "failure-agreement reports");
  return reports;
}

// Rank 0: the verdict from all reports.
Wire decide(const std::vector<std::optional<Report>>& reports, uint64_t sequence, const Deadline& deadline) {
  Wire w;
  w.sequence = sequence;
  const Report& mine = *reports[0];
  std::vector<int> silent, out_of_step;
  for (size_t r = 0; r < reports.size(); ++r) {
    if (!reports[r]) silent.push_back(static_cast<int>(r));
    else if (reports[r]->sequence != sequence || reports[r]->what != mine.what) out_of_step.push_back(static_cast<int>(r));
  }
  if (!silent.empty()) {
    w.kind = 2;
    w.code = ErrorCode::kTimeout;
    w.message = mine.what + ": no answer from " + rank_list(silent) + " within " +
                seconds_text(deadline.seconds()) + " s (stopped, hung, or not calling the same collective function)";
    return w;
  }
  if (!out_of_step.empty()) {
    const Report& other = *reports[out_of_step.front()];
    w.kind = 2;
    w.code = ErrorCode::kState;
    w.message = "ranks are out of step: rank 0 is in collective call #" + std::to_string(sequence) + " (" + mine.what +
                ") but " + rank_list(out_of_step) + " in call #" + std::to_string(other.sequence) + " (" + other.what +
                "); every rank must make the same collective calls in the same order";
    return w;
  }
  for (size_t r = 0; r < reports.size(); ++r) {
    if (!reports[r]->failed) continue;
    w.kind = 1;
    w.code = reports[r]->code;
    w.origin = static_cast<int64_t>(r);
    w.message = reports[r]->message;
    break;
  }
  return w;
}

// Rank 0: sends the verdict to every other rank (also to silent ones, which read it when they arrive).
void send_verdicts(MPI_Comm comm, int size, const Wire& w, const Deadline& deadline) {
  const std::vector<char> bytes = encode(w);
  std::vector<MPI_Request> sends(static_cast<size_t>(size - 1), MPI_REQUEST_NULL);
  for (int r = 1; r < size; ++r) {
    if (MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, r, kAgreementVerdictTag, comm,
                  &sends[r - 1]) != MPI_SUCCESS) {
      throw Error(ErrorCode::kComm, "MPI_Isend failed in the failure agreement");
    }
  }
  auto all_sent = [&] {
    int done = 0;
    MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
    return done != 0;
  };
  if (!wait_until(all_sent, deadline, "failure-agreement verdict sends")) {
    for (MPI_Request& s : sends) {
      if (s != MPI_REQUEST_NULL) MPI_Request_free(&s);  // a silent rank's copy is delivered if it ever comes
    }
  }
}

// A rank other than 0: reports, then waits for rank 0's verdict on this call.
Wire report_and_wait(MPI_Comm comm, const Report& mine, const Deadline& deadline) {
  const std::vector<char> bytes = encode(mine);
  MPI_Request send = MPI_REQUEST_NULL;
  if (MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kAgreementReportTag, comm, &send) !=
      MPI_SUCCESS) {
    throw Error(ErrorCode::kComm, "MPI_Isend failed in the failure agreement");
  }
  std::optional<Wire> verdict;
  auto arrived = [&] {
    while (!verdict) {
      std::optional<std::vector<char>> in = try_receive(comm, 0, kAgreementVerdictTag);
      if (!in) return false;
      verdict = decode_wire(*in);
      if (!verdict) throw Error(ErrorCode::kComm, "unreadable failure-agreement verdict from rank 0");
      if (verdict->sequence < mine.sequence) verdict.reset();  // stale: an earlier call's verdict
    }
    return true;
  };
  // Rank 0 can only answer once the slowest rank has reported, and it may have entered later than this rank (up
  // to a deadline later, when its own wait for a stopped peer timed out after this rank's) and then waits a full
  // deadline for the silent one: wait past both so that rank 0's verdict (which names the silent rank) arrives
  // first.
  const Deadline mine_deadline = deadline.bounded() ? Deadline::after(deadline.seconds() * 2.5 + 1.0) : deadline;
  const bool answered = wait_until(arrived, mine_deadline, "failure-agreement verdict");
  int sent = 0;
  MPI_Test(&send, &sent, MPI_STATUS_IGNORE);
  if (!sent) MPI_Request_free(&send);
  if (!answered) {
    Wire w;
    w.sequence = mine.sequence;
    w.kind = 2;
    w.code = ErrorCode::kTimeout;
    w.message = mine.what + ": no answer from rank 0 within " + seconds_text(mine_deadline.seconds()) +
                " s (rank 0 or another rank is stopped, hung, or not calling the same collective function)";
    return w;
  }
  return *verdict;
}

Verdict to_verdict(const Wire& w, int rank, const std::string& what) {
  Verdict v;
  v.sequence = w.sequence;
  if (w.kind == 0) return v;
  v.origin = static_cast<int>(w.origin);
  std::string message = w.message;
  if (w.kind == 1 && w.origin != rank) message += " (on rank " + std::to_string(w.origin) + ", during " + what + ")";
  v.error = Error(w.code, message);
  return v;
}

}  // namespace

std::optional<Error> as_error(const std::exception_ptr& failure) {
  if (!failure) return std::nullopt;
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, e.what());
  } catch (...) {
    return Error(ErrorCode::kInternal, "unknown exception");
  }
}

Verdict agree(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
              const std::optional<Deadline>& bound) {
  Decision none;
  return agree_on_decision(comm, what, mine, none, bound);
}

Verdict agree_on_decision(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
                          Decision& decision, const std::optional<Deadline>& bound) {
  const Deadline deadline = bound ? *bound : step_deadline();  // from now: see agreement.h
  int rank = 0, size = 1;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    Verdict v;
    v.error = Error(ErrorCode::kComm, what + ": the communicator is not usable (MPI_Comm_rank/size failed)");
    return v;
  }
  Report report;
  report.sequence = next_sequence(comm);
  report.what = bounded(what);
  report.failed = mine.has_value();
  if (mine) {
    report.code = mine->code();
    report.message = bounded(mine->what());
  }
  try {
    Wire w;
    if (rank == 0) {
      w = decide(collect_reports(comm, size, report.sequence, report, deadline), report.sequence, deadline);
      if (w.kind == 0) w.decision = decision;
      if (size > 1) send_verdicts(comm, size, w, deadline);
    } else {
      w = report_and_wait(comm, report, deadline);
      decision = w.kind == 0 ? w.decision : Decision{};
    }
    Verdict v = to_verdict(w, rank, what);
    // Messages of this call (or of the step before it) may still arrive from the silent rank: its communicators
    // must not be freed for reuse (request_wait.h, release_communicator).
    if (v.error && v.error->code() == ErrorCode::kTimeout) note_communication_abandoned();
    // A timeout verdict names the silent rank; what this rank itself timed out waiting for adds where it stuck.
    if (v.error && v.origin < 0 && mine && mine->code() == ErrorCode::kTimeout && v.error->code() == ErrorCode::kTimeout) {
      v.error = Error(ErrorCode::kTimeout, std::string(v.error->what()) + "; this rank timed out waiting for: " +
                                               bounded(mine->what()));
    }
    return v;
  } catch (const Error& e) {
    Verdict v;
    v.sequence = report.sequence;
    v.error = e;
    return v;
  }
}

void agree_or_throw(MPI_Comm comm, const std::string& what, const std::exception_ptr& mine,
                    const std::optional<Deadline>& deadline) {
  const Verdict v = agree(comm, what, as_error(mine), deadline);
  if (!v.error) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (mine && v.origin == rank) std::rethrow_exception(mine);
  throw *v.error;
}

void agree_or_throw(MPI_Comm comm, const std::string& what, const std::optional<Error>& mine,
                    const std::optional<Deadline>& deadline) {
  const Verdict v = agree(comm, what, mine, deadline);
  if (v.error) throw *v.error;
}

}  // namespace sluice::comm
