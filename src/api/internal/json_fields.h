// Every message's `Fields()` table, in the order the encoder and decoder need them: all are
// declared before json_encoder.h and json_decoder.h, whose templates look them up.
//
// Part of the JSON codecs (api/json_codec.h).
#pragma once

#include "api/internal/json_base.h"
#include "api/internal/json_fields_audit.h"
#include "api/internal/json_fields_reports.h"
#include "api/internal/json_fields_governance.h"
#include "api/internal/json_fields_diag.h"
#include "api/internal/json_fields_stats.h"
#include "api/internal/json_fields_jobs.h"
#include "api/internal/json_fields_nodes.h"
#include "api/internal/json_fields_steps.h"

namespace corral::api::internal {

// ---------------------------------------------------------------------------------------------
// The fields of each message, in the order they are written. `v(name, field)` is called once
// per field, by the encoder and by the decoder alike, so the two cannot drift apart. JSON
// names are the C++ field names; the `*Info` types write their record's fields inline.

template <typename V, AnyListRef S>
void Fields(V& v, S& s) {
  v(s.name, s.items);
}

template <typename T>
concept HasFields = requires(T& t, void (*visit)(std::string_view, int)) {
  Fields(visit, t);
};

}  // namespace corral::api::internal
