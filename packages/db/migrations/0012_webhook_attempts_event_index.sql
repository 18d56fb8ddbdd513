-- migrate: no-transaction
-- Built without blocking writes to a table that only grows; run outside a transaction, so the
-- statement is written to be run again after an interrupted build.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_attempts_event_idx" ON "webhook_attempts" USING btree ("event_id");
