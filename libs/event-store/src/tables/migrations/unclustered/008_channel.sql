-- The channel of every event (libs/classifier channelOf, README "Channels"), written by the writer at ingest.
-- Rows stored before this migration get it from the DEFAULT expression below when read: the same rule order over the
-- stored source, medium, rule id and referrer, with the paid split and the AI assistants frozen to the best-known names
-- (channelOf knows more of both; events stored from now on carry its exact answer). Never recomputed on later reads.
ALTER TABLE ${db}.events ADD COLUMN IF NOT EXISTS channel LowCardinality(String) DEFAULT
  ${channel_default}
  AFTER source_rule_id;
