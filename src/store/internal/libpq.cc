#include "store/internal/libpq.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace corral::store::internal {

Result<const Libpq*> LoadLibpq(const std::string& soname) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Libpq>>* loaded =
      new std::map<std::string, std::unique_ptr<Libpq>>();  // never destroyed: see libpq.h
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded->find(soname); it != loaded->end()) return it->second.get();

  auto fail = [&](std::string_view why) {
    return Unavailable("postgresql store: cannot load " + soname + ": " + std::string(why));
  };
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return fail(e ? e : "unknown dlopen error");
  }
  auto lib = std::make_unique<Libpq>();
  std::string missing;
  auto resolve = [&](auto& fn, const char* name) {
    void* sym = dlsym(handle, name);
    if (sym == nullptr) {
      missing += missing.empty() ? name : std::string(", ") + name;
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  resolve(lib->connectdb, "PQconnectdb");
  resolve(lib->finish, "PQfinish");
  resolve(lib->status, "PQstatus");
  resolve(lib->reset, "PQreset");
  resolve(lib->errorMessage, "PQerrorMessage");
  resolve(lib->transactionStatus, "PQtransactionStatus");
  resolve(lib->setNoticeProcessor, "PQsetNoticeProcessor");
  resolve(lib->exec, "PQexec");
  resolve(lib->execParams, "PQexecParams");
  resolve(lib->prepare, "PQprepare");
  resolve(lib->execPrepared, "PQexecPrepared");
  resolve(lib->sendQueryPrepared, "PQsendQueryPrepared");
  resolve(lib->sendQueryParams, "PQsendQueryParams");
  resolve(lib->enterPipelineMode, "PQenterPipelineMode");
  resolve(lib->exitPipelineMode, "PQexitPipelineMode");
  resolve(lib->pipelineSync, "PQpipelineSync");
  resolve(lib->setSingleRowMode, "PQsetSingleRowMode");
  resolve(lib->getResult, "PQgetResult");
  resolve(lib->resultStatus, "PQresultStatus");
  resolve(lib->resultErrorMessage, "PQresultErrorMessage");
  resolve(lib->resultErrorField, "PQresultErrorField");
  resolve(lib->clear, "PQclear");
  resolve(lib->ntuples, "PQntuples");
  resolve(lib->nfields, "PQnfields");
  resolve(lib->getvalue, "PQgetvalue");
  resolve(lib->getlength, "PQgetlength");
  resolve(lib->getisnull, "PQgetisnull");
  resolve(lib->libVersion, "PQlibVersion");
  if (!missing.empty()) {
    dlclose(handle);
    return fail("missing functions " + missing);
  }
  const Libpq* result = lib.get();
  loaded->emplace(soname, std::move(lib));
  return result;
}

}  // namespace corral::store::internal
