// shell_quote is checked against bash itself: the quoted word must come back from bash byte for byte.
#include "slurm/shell_quote.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace sluice::slurm {
namespace {

// What bash prints for `printf %s WORD` with WORD pasted in as quoted.
std::string echoed_by_bash(const std::string& quoted) {
  // popen runs `sh -c`, which hands bash one argument: the printf command line.
  const std::string command = "bash -c " + shell_quote("printf %s " + quoted);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "<popen failed>";
  std::string output;
  char buffer[256];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  pclose(pipe);
  return output;
}

TEST(ShellQuote, PlainWordsStayReadable) {
  EXPECT_EQ(shell_quote("/opt/sluice/bin/sluice"), "/opt/sluice/bin/sluice");
  EXPECT_EQ(shell_quote("optimizer.lr=1e-3"), "optimizer.lr=1e-3");
}

TEST(ShellQuote, EmptyWordIsKept) { EXPECT_EQ(shell_quote(""), "''"); }

TEST(ShellQuote, BashReadsBackExactlyTheWord) {
  for (const std::string word : {"a b", "it's", "$HOME", "`date`", "x;rm -rf y", "\"q\"", "a\\b", "*", "''"}) {
    EXPECT_EQ(echoed_by_bash(shell_quote(word)), word) << "quoted as " << shell_quote(word);
  }
}

}  // namespace
}  // namespace sluice::slurm
