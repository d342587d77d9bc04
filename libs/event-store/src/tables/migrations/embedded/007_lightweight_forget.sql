-- Forgets delete with lightweight updates on the embedded store (ForgetQueue). An ALTER TABLE ... DELETE rewrites every
-- active part of events, one part at a time, even the parts no row of the user is in: a table whose data spans many
-- month partitions (a backfill, or a project spreading a batch over 1000 months) made every forget of every project
-- rewrite all of them. A lightweight delete in `lightweight_update` mode writes one small patch part per partition that
-- holds matching rows instead; reads apply it at once and merges fold it into the parts. It needs every part to carry
-- its block number and offset, which new parts get from here on (parts written before are patched all the same).
ALTER TABLE ${db}.events MODIFY SETTING enable_block_number_column = 1, enable_block_offset_column = 1;
