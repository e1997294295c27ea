// The batch script as sbatch reads it: the #SBATCH directives at its top, the checks Slurm
// makes of its text, and the script `--wrap` makes.
//
// Directives (`ExtractDirectives`): "#SBATCH" (or the older "#SLURM") lines from the top of
// the script up to the first command line; blank lines and other comments ("# ...", "##SBATCH",
// " #SBATCH") are skipped; several options may share a line; "#SBATCH--opt" needs no space;
// an unquoted, unescaped '#' starts a comment; quotes and backslashes group as in Slurm;
// `$VAR` and `~` are NOT expanded.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::slurm {

// The sbatch script of `sbatch --wrap=CMD`, byte for byte as Slurm writes it.
std::string WrapScript(std::string_view command);

// Reads the directives of a batch script (see the header comment) into argument words.
// Returns kInvalidArgument ("sbatch: fatal: SCRIPT: line N: Unmatched `\"` in [...]",
// "... Unexpected `:` ...") for an unmatched quote or a ':' (heterogeneous job separator).
Result<std::vector<std::string>> ExtractDirectives(std::string_view script,
                                                   std::string_view script_name = "script");

// Slurm's checks of a batch script's text. Returns kInvalidArgument with sbatch's message
// for an empty script, one without "#!" first, DOS line breaks or a NUL byte.
Status CheckBatchScript(std::string_view script);

}  // namespace corral::slurm
