-- Issue 47: each project counts its days, weeks and months in its own time zone (an IANA name; the admin API checks it).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS timezone text NOT NULL DEFAULT 'UTC';
