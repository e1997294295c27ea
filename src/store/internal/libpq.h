// libpq, loaded at run time with dlopen (never linked: Debian's libpq.so.5 pulls in a long
// chain of shared libraries that every `corral` CLI call would pay to load). <libpq-fe.h>
// is used only for its types and constants. Private to the store.
//
// Thread-safe. The library stays loaded until the process exits.
#pragma once

#include <memory>
#include <string>

#include <libpq-fe.h>

#include "core/result.h"

namespace corral::store::internal {

// The libpq functions the store uses, resolved from one loaded library.
struct Libpq {
  decltype(&::PQconnectdb) connectdb;
  decltype(&::PQfinish) finish;
  decltype(&::PQstatus) status;
  decltype(&::PQreset) reset;
  decltype(&::PQerrorMessage) errorMessage;
  decltype(&::PQtransactionStatus) transactionStatus;
  decltype(&::PQsetNoticeProcessor) setNoticeProcessor;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) execParams;
  decltype(&::PQprepare) prepare;
  decltype(&::PQexecPrepared) execPrepared;
  decltype(&::PQsendQueryPrepared) sendQueryPrepared;
  decltype(&::PQsendQueryParams) sendQueryParams;
  decltype(&::PQenterPipelineMode) enterPipelineMode;  // libpq 14+
  decltype(&::PQexitPipelineMode) exitPipelineMode;
  decltype(&::PQpipelineSync) pipelineSync;
  decltype(&::PQsetSingleRowMode) setSingleRowMode;
  decltype(&::PQgetResult) getResult;
  decltype(&::PQresultStatus) resultStatus;
  decltype(&::PQresultErrorMessage) resultErrorMessage;
  decltype(&::PQresultErrorField) resultErrorField;
  decltype(&::PQclear) clear;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQnfields) nfields;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQlibVersion) libVersion;
};

// Loads `soname` (once per name; later calls return the same table). Returns kUnavailable
// "postgresql store: cannot load SONAME: REASON" when the library or one of the functions
// is missing (pipeline mode needs libpq 14 or newer; Debian 12 has 15).
Result<const Libpq*> LoadLibpq(const std::string& soname = "libpq.so.5");

// Owns a PGresult.
struct PgResultDeleter {
  const Libpq* pq;
  void operator()(PGresult* r) const {
    if (r) pq->clear(r);
  }
};
using PgResultPtr = std::unique_ptr<PGresult, PgResultDeleter>;

}  // namespace corral::store::internal
