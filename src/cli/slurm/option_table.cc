#include "cli/slurm/option_table.h"

namespace corral::slurm::internal {
namespace {

// Options without a letter have ids past every letter: this plus their index.
constexpr int kLongIdBase = 1000;

}  // namespace

std::vector<FoundOption> ScanForms(const std::vector<OptionForm>& forms,
                                   const std::vector<std::string>& words, const char* mode,
                                   std::optional<GetoptFailure>* failure,
                                   std::vector<std::string>* operands) {
  std::vector<LongOption> longs;
  std::string optstring = mode;
  for (size_t i = 0; i < forms.size(); ++i) {
    const OptionForm& f = forms[i];
    int id = f.letter != 0 ? f.letter : kLongIdBase + static_cast<int>(i);
    if (f.name != nullptr) longs.push_back({f.name, f.arg, id});
    if (f.alias != nullptr) longs.push_back({f.alias, f.arg, id});
    if (f.letter == 0 || optstring.find(f.letter) != std::string::npos) continue;
    optstring += f.letter;
    if (f.arg == ArgKind::kRequired) optstring += ":";
    if (f.arg == ArgKind::kOptional) optstring += "::";
  }
  GetoptResult scan = Getopt(words, longs, optstring);
  std::vector<FoundOption> found;
  for (GetoptOption& o : scan.options) {
    size_t form = 0;
    if (o.id >= kLongIdBase) {
      form = static_cast<size_t>(o.id - kLongIdBase);
    } else {
      while (forms[form].letter != o.id) ++form;
    }
    found.push_back({form, std::move(o)});
  }
  *failure = std::move(scan.failure);
  *operands = std::move(scan.operands);
  return found;
}

std::string FormsHelp(const std::vector<OptionForm>& forms) {
  std::vector<HelpLine> lines;
  for (const OptionForm& f : forms) {
    if (f.help == nullptr) continue;
    lines.push_back({f.letter, f.name, f.arg, f.arg_name, f.help});
  }
  return FormatHelp(lines);
}

}  // namespace corral::slurm::internal
