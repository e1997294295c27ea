// Being written; see http.h.
