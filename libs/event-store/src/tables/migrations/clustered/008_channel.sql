-- The channel of every event (libs/classifier channelOf, README "Channels"), written by the writer at ingest.
-- Rows stored before this migration get it from the DEFAULT expression below when read: the same rule order over the
-- stored source, medium, rule id and referrer, with the paid split and the AI assistants frozen to the best-known names
-- (channelOf knows more of both; events stored from now on carry its exact answer). Never recomputed on later reads.
-- events_local holds the column; the Distributed events names it with the same DEFAULT, which fills inserts that omit it.
ALTER TABLE ${db}.events_local ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS channel LowCardinality(String) DEFAULT
  ${channel_default}
  AFTER source_rule_id;

ALTER TABLE ${db}.events ON CLUSTER ${cluster} ADD COLUMN IF NOT EXISTS channel LowCardinality(String) DEFAULT
  ${channel_default}
  AFTER source_rule_id;
