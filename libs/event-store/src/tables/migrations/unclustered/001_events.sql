-- The spec's "Stored event row". ip_hash arrives as hex in an EPHEMERAL column (JSON cannot carry raw bytes)
-- and is stored as its 16 bytes. Partitioned by month, ordered by (project_id, timestamp, event_id).
-- Spacing as first applied (a trailing space after the table name): the checksum is of these bytes.
CREATE TABLE IF NOT EXISTS ${db}.events 
(
  project_id        UUID,
  timestamp         DateTime64(3, 'UTC'),
  event_id          String,
  event_name        String,
  anonymous_id      String,
  user_id           Nullable(String),
  session_id        String,
  source            LowCardinality(String),
  medium            LowCardinality(String),
  campaign          Nullable(String),
  source_confidence LowCardinality(String),
  source_rule_id    LowCardinality(String),
  referrer          Nullable(String),
  url               Nullable(String),
  path              Nullable(String),
  country           LowCardinality(String),
  device_type       LowCardinality(String),
  browser           LowCardinality(String),
  os                LowCardinality(String),
  ip_hash_hex       String EPHEMERAL '',
  ip_hash           FixedString(16) DEFAULT unhex(ip_hash_hex),
  properties        String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, event_id);

