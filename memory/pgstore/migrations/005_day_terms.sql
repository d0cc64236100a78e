-- A daily log's chunks also index the day's term (memory.DayTerm,
-- "20230508"), which a query naming a period matches: every agent is
-- re-indexed once (stored vectors are reused).
UPDATE documents SET hash = '';
UPDATE agents SET indexed_commit = '';
