// Reading and writing schedule files; the extension picks the format.
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/schedule/schedule_io.h"

namespace sluice {
namespace schedule {
namespace {

bool is_csv_path(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
}

}  // namespace

void save_schedule(const Schedule& schedule, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::kIo, "cannot open schedule file '" + path + "' for writing");
  out << (is_csv_path(path) ? to_csv(schedule) : to_text(schedule));
  out.flush();
  if (!out) throw Error(ErrorCode::kIo, "failed writing schedule file '" + path + "'");
}

Schedule load_schedule(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kIo, "cannot open schedule file '" + path + "' for reading");
  std::ostringstream content;
  content << in.rdbuf();
  return is_csv_path(path) ? parse_csv(content.str(), path) : parse_text(content.str(), path);
}

}  // namespace schedule
}  // namespace sluice
