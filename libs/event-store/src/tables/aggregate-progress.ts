/**
 * aggregate_progress's columns on a server and in a cluster (012 creates the table there; the embedded store's 004
 * created it and its 012 adds the same columns): fragment aggregate_progress_columns.
 */
export const AGGREGATE_PROGRESS_COLUMNS = `(
  seq_from UInt64,
  seq_to   UInt64,
  at       DateTime64(3, 'UTC') DEFAULT now64(3),
  floor    UInt64 DEFAULT 0,
  floor_from UInt64 DEFAULT 0,
  covered  UInt64 DEFAULT 0,
  writers  Array(UInt64),
  froms    Array(UInt64),
  tos      Array(UInt64),
  done     UInt8 DEFAULT 0
)`;
