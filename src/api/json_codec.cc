// Being written; see json_codec.h.
