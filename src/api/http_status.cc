// Being written; see http_status.h.
