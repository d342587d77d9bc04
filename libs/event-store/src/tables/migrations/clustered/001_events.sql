-- The spec's "Stored event row". ip_hash arrives as hex in an EPHEMERAL column (JSON cannot carry raw bytes)
-- and is stored as its 16 bytes. Partitioned by month, ordered by (project_id, timestamp, event_id).
-- The rows live in `events_local`, a ReplicatedMergeTree on every shard; `events` is the Distributed table over it.
CREATE TABLE IF NOT EXISTS ${db}.events_local ON CLUSTER ${cluster}
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
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/events_local', '{replica}')
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, event_id);

-- `events`, the table every insert and read names, as a Distributed table over the shards' events_local. Sharding key
-- cityHash64(project_id, session_id): every event of a session lands on ONE shard, so the sessions aggregate that
-- the materialized views build on each shard holds whole sessions (entry source/medium from all of the session's
-- events). Reads through the Distributed tables merge partial aggregates across shards and would be right anyway;
-- whole sessions per shard also make shard-local reads (sessions_local, optimize_distributed_group_by_sharding_key)
-- right. session_id is never empty (it falls back to the user_id), so unlike anonymous_id ('' for user-only
-- events) it cannot pile one project's user-only traffic onto one shard.
CREATE TABLE IF NOT EXISTS ${db}.events ON CLUSTER ${cluster} AS ${db}.events_local
ENGINE = Distributed(${cluster}, ${db}, events_local, ${events_sharding_key});
