// Fuzz target: the YAML config parser with `--set` overrides (core/config: config_parser, yaml_overrides,
// yaml_strict), as `sluice train CONFIG --set k=v ...` reaches it.
// Input: YAML text; each line that starts with "--set " is taken out of the text and becomes one override, in
// order (seeds stay readable: tests/fuzz/corpus/config_parser/).
// Contract checked: bad input is a sluice::Error (the parser's documented error); any other exception, crash,
// sanitizer report or leak is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/config/config_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  // parse_config reads a file when its argument names one: the leading comment line keeps the input text.
  std::string yaml = "# fuzz input\n";
  std::vector<std::string> overrides;
  std::istringstream lines(input);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("--set ", 0) == 0) {
      overrides.push_back(line.substr(6));
    } else {
      yaml += line + "\n";
    }
  }
  try {
    sluice::config::parse_config(yaml, overrides);
  } catch (const sluice::Error&) {
    // Rejected with the documented error: what bad input should get.
  }
  return 0;
}
