-- One write design for every mode (README, "One builder, every mode"). An INSERT carries, besides insert_seq (004),
-- the writer that made it and its row count, all EPHEMERAL inputs stored MATERIALIZED (never in SELECT * or an
-- answer). The embedded store has one writer, this process (insert_writer 0); a server has a few per ingest process,
-- each with one INSERT in flight, and the builder proves an INSERT complete when the rows stored with its
-- (insert_writer, insert_seq) number insert_rows. Rows from before this migration read 0 and 0.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_writer_in UInt64 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_writer UInt64 MATERIALIZED insert_writer_in;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_rows_in UInt32 EPHEMERAL 0;
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS insert_rows UInt32 MATERIALIZED insert_rows_in;

-- A range is now one bound per writer: (froms[i], tos[i]] of writers[i]; seq_to is the range's stamp (the built_seq
-- of its aggregate rows); floor: every event with insert_seq at or below it is built. A row from before this
-- migration has empty arrays and means writer 0's (seq_from, seq_to].
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS floor UInt64 DEFAULT 0;
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS floor_from UInt64 DEFAULT 0;
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS covered UInt64 DEFAULT 0;
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS writers Array(UInt64);
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS froms Array(UInt64);
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS tos Array(UInt64);
ALTER TABLE ${db}.aggregate_progress ADD COLUMN IF NOT EXISTS done UInt8 DEFAULT 0;
