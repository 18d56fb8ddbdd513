-- migrate: no-transaction
-- The floor's recent batches read in index order, and an endpoint's last finished events read
-- from the index alone (their state in it). The new endpoint index serves every read the old one
-- did, so the old one goes once the new one is built; no code names either. Each statement can
-- be run again after an interrupted build.
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS "print_batches_recent_idx" ON "print_batches" USING btree ("closed_at" DESC NULLS LAST,"id") WHERE status <> 'open';
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_events_endpoint_state_idx" ON "webhook_events" USING btree ("endpoint_id","finished_at","state");
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "webhook_events_endpoint_idx";
