-- The spec's "Stored event row". ip_hash arrives as hex in an EPHEMERAL column (JSON cannot carry raw bytes)
-- and is stored as its 16 bytes. Partitioned by month, ordered by (project_id, timestamp, event_id).
-- Single node this table is `events` itself. Cluster mode (CLICKHOUSE_CLUSTER): it is `events_local`, a
-- ReplicatedMergeTree on every shard, and `events` is the Distributed table over it created below.
CREATE TABLE IF NOT EXISTS ${db}.${events_table} ${on_cluster}
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
ENGINE = ${engine_events}
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, event_id);

-- Cluster mode only (the cluster_only placeholder turns these lines into comments on a single node): `events`, the
-- table every insert and read names, as a Distributed table over the shards' events_local. Sharding key
-- cityHash64(project_id, session_id): every event of a session lands on ONE shard, so the sessions aggregate that
-- the materialized views build on each shard holds whole sessions (entry source/medium from all of the session's
-- events). Reads through the Distributed tables merge partial aggregates across shards and would be right anyway;
-- whole sessions per shard also make shard-local reads (sessions_local, optimize_distributed_group_by_sharding_key)
-- right. session_id is never empty (it falls back to the user_id), so unlike anonymous_id ('' for user-only
-- events) it cannot pile one project's user-only traffic onto one shard.
${cluster_only}CREATE TABLE IF NOT EXISTS ${db}.events ${on_cluster} AS ${db}.${events_table}
${cluster_only}ENGINE = Distributed(${cluster}, ${db}, ${events_table}, ${events_sharding_key});
