// sshare's and sprio's output, rendered as Slurm 22.05 prints them (checked against a real
// 22.05.8 with priority/multifactor), from Corral's fair-share tree and priority factors.
//
// sshare: the fields Account (indented one blank per level), User, RawShares, NormShares,
// RawUsage, NormUsage, EffectvUsage, FairShare, LevelFS, GrpTRESMins, TRESRunMins; the default
// list "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare", -l adds NormUsage,
// LevelFS, GrpTRESMins and TRESRunMins; -o "Name[%width]" lists (a positive width right-aligns,
// a negative one left-aligns; names any case); -P, -p, -n. Account rows leave the user fields
// blank; the root row shows NormShares 0.000000 and EffectvUsage 1.000000 as Slurm's does.
// Corral has no GrpTRESMins or running-TRES figures per association: those fields are blank.
//
// sprio: "%[.][width]letter" formats with the letters of Slurm's sprio (a/A age, b/B assoc,
// c cluster, f/F fairshare, i job id, j/J job size, N nice, p/P partition, q/Q QOS,
// r partition name, S site, t/T TRES, u user, y/Y priority; lower case = normalized factor);
// the default format drops the factors whose weight is 0, as sprio does; -l, -n (normalized),
// -w (the weights line), -h (no header).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/messages.h"
#include "api/report_messages.h"
#include "core/result.h"

namespace corral::slurm {

struct SshareOptions {
  std::string format;     // -o; "" = the default (or long) list
  bool long_list = false;  // -l
  bool parsable = false;   // -p
  bool parsable2 = false;  // -P
  bool no_header = false;  // -n
};

// Renders `rows` (already filtered) in their order. Returns kInvalidArgument
// ("Invalid field requested: \"X\"") for an unknown field of -o. `root_usage` is the root's
// raw usage (NormUsage's denominator).
Result<std::string> RenderSshare(const std::vector<api::ShareRow>& rows, double root_usage,
                                 const SshareOptions& options);

struct SprioOptions {
  std::string format;        // -o; "" = the default
  bool long_list = false;    // -l
  bool normalized = false;   // -n
  bool weights = false;      // -w: the weights line only
  bool no_header = false;    // -h
  bool users_given = false;  // -u: the default format gets USER
  std::string cluster = "corral";
};

// The default format for `options` and `weights` (see the file comment).
std::string SprioDefaultFormat(const SprioOptions& options, const api::PriorityWeights& weights);

// Renders `jobs` (already filtered), or the weights line with -w. Unknown letters are
// reported as sprio does: kInvalidArgument ("Invalid job format specification: X").
Result<std::string> RenderSprio(const std::vector<api::PriorityInfo>& jobs,
                                const api::PriorityWeights& weights, const SprioOptions& options);

}  // namespace corral::slurm
