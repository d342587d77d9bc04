-- visits_local and daily_rollup_local merged within the hour, as unclustered/015_aggregates_merged.sql (the reasons
-- are there), on every replica.
ALTER TABLE ${db}.visits_local ON CLUSTER ${cluster} MODIFY SETTING min_age_to_force_merge_seconds = 3600;
ALTER TABLE ${db}.daily_rollup_local ON CLUSTER ${cluster} MODIFY SETTING min_age_to_force_merge_seconds = 3600;
