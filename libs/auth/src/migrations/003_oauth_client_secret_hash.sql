-- A registered client's secret is kept only as its SHA-256 (hex, as key secrets); secrets stored in plain text by
-- 002 move here and leave the metadata. An empty secret meant "none" to the SDK and stays none.
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS client_secret_hash text;

UPDATE oauth_clients
   SET client_secret_hash = CASE WHEN metadata->>'client_secret' <> '' THEN encode(sha256(convert_to(metadata->>'client_secret', 'UTF8')), 'hex') END,
       metadata = metadata - 'client_secret'
 WHERE metadata->'client_secret' IS NOT NULL;
