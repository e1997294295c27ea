// Being written; see auth.h.
