// One table per command that drives both the command's option scan and its handling, in the
// shape of Slurm's `slurm_opt.c`: each entry names an option (long form, another long form,
// short letter, argument), its --help line and the function that applies it to the command's
// settings. For the commands other than sbatch, srun and salloc (whose one table is
// internal/job_options.h): squeue, sinfo, sacct, scontrol, scancel and `corral run`.
//
// Scanning is glibc's getopt_long (getopt.h) over the table. The handlers run in the order
// the options were given, and stop at the first error; an entry that `stops` (--help,
// --version) ends the scan once applied, as those commands exit there.
//
// Thread-safe (the tables are constant; the settings are the caller's).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/slurm/getopt.h"
#include "core/result.h"
#include "core/strings.h"

namespace corral::slurm {

template <typename Settings>
struct CommandOption {
  const char* name = nullptr;  // the long form (null = none)
  char letter = 0;             // the short form (0 = none)
  ArgKind arg = ArgKind::kNone;
  // Applies the option (its argument, "" when none). Its error ends the scan.
  Status (*apply)(Settings& settings, const std::string& value) = nullptr;
  const char* arg_name = nullptr;  // --help: the argument's name
  const char* help = nullptr;      // --help: what it does; null = not listed
  const char* alias = nullptr;     // another long form ("--job" for "--jobs")
  bool stops = false;              // the scan ends once it is applied
};

// What a scan found.
struct OptionScan {
  std::optional<GetoptFailure> failure;  // getopt_long refused a word
  std::optional<Error> error;            // a handler's error
  bool stopped = false;                  // an entry that `stops` was applied
  std::vector<std::string> operands;     // with neither failure nor error
  std::vector<size_t> applied;           // the entries whose handlers ran, in order
};

namespace internal {

// An entry's shape, without its handler.
struct OptionForm {
  const char* name;
  const char* alias;
  char letter;
  ArgKind arg;
  const char* arg_name;
  const char* help;
};

// One option found: the index of its form, and its argument.
struct FoundOption {
  size_t form;
  GetoptOption option;
};

// Scans `words` (words[0] is the program) for the options of `forms`; `mode` is the start of
// getopt's string ("+:" stops at the first operand, ":" permutes).
std::vector<FoundOption> ScanForms(const std::vector<OptionForm>& forms,
                                   const std::vector<std::string>& words, const char* mode,
                                   std::optional<GetoptFailure>* failure,
                                   std::vector<std::string>* operands);

// The --help lines of `forms`.
std::string FormsHelp(const std::vector<OptionForm>& forms);

template <typename Settings>
std::vector<OptionForm> Forms(std::span<const CommandOption<Settings>> table) {
  std::vector<OptionForm> forms;
  for (const auto& o : table) {
    forms.push_back({o.name, o.alias, o.letter, o.arg, o.arg_name, o.help});
  }
  return forms;
}

}  // namespace internal

// Scans `words` (words[0] is the program's name) with `table`, applying each option found to
// `settings`. `mode` as for `ScanForms`.
template <typename Settings>
OptionScan ScanWithTable(std::span<const CommandOption<Settings>> table,
                         const std::vector<std::string>& words, const char* mode,
                         Settings& settings) {
  OptionScan scan;
  std::optional<GetoptFailure> failure;
  std::vector<std::string> operands;
  std::vector<internal::FoundOption> found =
      internal::ScanForms(internal::Forms(table), words, mode, &failure, &operands);
  for (const internal::FoundOption& f : found) {
    const CommandOption<Settings>& entry = table[f.form];
    scan.applied.push_back(f.form);
    if (Status s = entry.apply(settings, f.option.value); !s) {
      scan.error = s.error();
      return scan;
    }
    if (entry.stops) {
      scan.stopped = true;
      return scan;
    }
  }
  scan.failure = std::move(failure);
  if (!scan.failure) scan.operands = std::move(operands);
  return scan;
}

// The --help lines of `table`'s options.
template <typename Settings>
std::string TableHelp(std::span<const CommandOption<Settings>> table) {
  return internal::FormsHelp(internal::Forms(table));
}

namespace internal {

template <typename T>
struct ClassOf;
template <typename C, typename F>
struct ClassOf<F C::*> {
  using type = C;
};

// The field `path` (a member, then members of it) leads to in `object`.
template <typename T, typename M, typename... Ms>
auto& Field(T& object, M member, Ms... path) {
  if constexpr (sizeof...(path) == 0) {
    return object.*member;
  } else {
    return Field(object.*member, path...);
  }
}

}  // namespace internal

// Handlers that set the field of the settings `kPath` leads to (`&Args::dead`, or
// `&Args::render, &RenderOptions::no_header`): to true, to the option's argument, or to the
// items of its comma-separated list (empty ones dropped).
template <auto kFirst, auto... kPath>
Status SetTrue(typename internal::ClassOf<decltype(kFirst)>::type& settings, const std::string&) {
  internal::Field(settings, kFirst, kPath...) = true;
  return {};
}
template <auto kFirst, auto... kPath>
Status SetValue(typename internal::ClassOf<decltype(kFirst)>::type& settings,
                const std::string& value) {
  internal::Field(settings, kFirst, kPath...) = value;
  return {};
}
template <auto kFirst, auto... kPath>
Status SetList(typename internal::ClassOf<decltype(kFirst)>::type& settings,
               const std::string& value) {
  internal::Field(settings, kFirst, kPath...) = SplitNonEmpty(value, ',');
  return {};
}
// An option accepted without effect.
template <typename Settings>
Status Accept(Settings&, const std::string&) {
  return {};
}

// True when every entry of `table` has a handler and a long or short form: checked at
// compile time by each table (static_assert).
template <typename Settings, size_t N>
constexpr bool EveryOptionHasAHandler(const CommandOption<Settings> (&table)[N]) {
  for (const auto& o : table) {
    if (o.apply == nullptr || (o.name == nullptr && o.letter == 0)) return false;
  }
  return true;
}

}  // namespace corral::slurm
