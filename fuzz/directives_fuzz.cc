// Fuzzes the #SBATCH directive extraction and the whole sbatch option parser on arbitrary
// scripts (the input is the script; a second, NUL-separated part is used as command-line
// arguments).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm/directives.h"
#include "cli/slurm/submit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view script = input;
  std::vector<std::string> args;
  if (size_t sep = input.find('\0'); sep != std::string_view::npos) {
    script = input.substr(0, sep);
    std::string_view rest = input.substr(sep + 1);
    size_t start = 0;
    while (start <= rest.size() && args.size() < 32) {
      size_t end = rest.find('\n', start);
      args.emplace_back(
          rest.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  (void)corral::slurm::ExtractDirectives(script);
  corral::slurm::SubmitContext ctx;
  ctx.cwd = "/home/u";
  ctx.user = "u";
  ctx.environment = {{"SBATCH_PARTITION", "p"}, {"HOME", "/home/u"}};
  args.push_back("job.sh");
  (void)corral::slurm::ParseSbatch(args, script, ctx);
  args.pop_back();
  (void)corral::slurm::ParseSrun(args, ctx);
  (void)corral::slurm::ParseSalloc(args, ctx);
  return 0;
}
