#include "cli/slurm/directives.h"

#include <cctype>

namespace corral::slurm {

std::string WrapScript(std::string_view command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + std::string(command) + "\n";
}

Result<std::vector<std::string>> ExtractDirectives(std::string_view script,
                                                   std::string_view script_name) {
  std::vector<std::string> words;
  size_t pos = 0;
  int lineno = 0;
  while (pos < script.size()) {
    size_t eol = script.find('\n', pos);
    std::string_view line =
        script.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? script.size() : eol + 1;
    ++lineno;
    std::string_view rest;
    if (line.rfind("#SBATCH", 0) == 0) {
      rest = line.substr(7);
    } else if (line.rfind("#SLURM", 0) == 0) {
      rest = line.substr(6);
    } else {
      // Blank lines and comments are skipped; the first command ends the directives.
      size_t i = 0;
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i < line.size() && line[i] != '#') break;
      continue;
    }
    // Split `rest` into words the way Slurm's sbatch does.
    size_t i = 0;
    while (true) {
      while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
      if (i < rest.size() && rest[i] == ':') {
        return InvalidArgument("sbatch: fatal: " + std::string(script_name) + ": line " +
                               std::to_string(lineno) + ": Unexpected `:` in [" +
                               std::string(rest.substr(i)) + "]");
      }
      if (i >= rest.size()) break;
      std::string word;
      bool quoted = false, escape = false, any = false;
      char quote = 0;
      while (i < rest.size() && (quoted || !std::isspace(static_cast<unsigned char>(rest[i])))) {
        char ch = rest[i];
        if (escape) {
          escape = false;
        } else if (ch == '\\') {
          escape = true;
          ++i;
          continue;
        } else if (quoted) {
          if (ch == quote) {
            quoted = false;
            ++i;
            continue;
          }
        } else if (ch == '"' || ch == '\'') {
          quoted = true;
          quote = ch;
          ++i;
          continue;
        } else if (ch == '#') {
          break;  // the rest of the line is a comment
        }
        word += ch;
        any = true;
        ++i;
      }
      if (quoted) {
        return InvalidArgument("sbatch: fatal: " + std::string(script_name) + ": line " +
                               std::to_string(lineno) + ": Unmatched `" + std::string(1, quote) +
                               "` in [" + std::string(rest) + "]");
      }
      if (!any) break;  // a comment: nothing more on this line
      words.push_back(std::move(word));
    }
  }
  return words;
}

Status CheckBatchScript(std::string_view text) {
  if (text.empty()) return InvalidArgument("sbatch: error: Batch script is empty!");
  if (text.rfind("#!", 0) != 0) {
    return InvalidArgument(
        "sbatch: error: This does not look like a batch script.  The first line must start "
        "with #! followed by the path to an interpreter.");
  }
  if (text.find("\r\n") != std::string_view::npos) {
    return InvalidArgument(
        "sbatch: error: Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX "
        "line breaks (\\n).");
  }
  if (text.find('\0') != std::string_view::npos) {
    return InvalidArgument("sbatch: error: The batch script contains a NUL character");
  }
  return {};
}

}  // namespace corral::slurm
