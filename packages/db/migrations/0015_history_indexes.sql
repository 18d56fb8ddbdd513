-- migrate: no-transaction
-- Indexes on tables that grow with every letter, built without blocking their writes; each
-- statement is written to be run again after an interrupted build. The migrator runs a file so
-- marked statement by statement, outside any transaction, which squawk cannot tell from here.
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_campaign_created_idx" ON "letters" USING btree ("account_id","livemode","campaign_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE campaign_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_in_flight_idx" ON "letters" USING btree ("livemode","status") WHERE status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'failed');
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_needs_look_idx" ON "letters" USING btree ("livemode","status","updated_at") WHERE status IN ('received', 'ready_for_print', 'printing', 'failed');
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "outbox_sent_idx" ON "outbox" USING btree ("sent_at") WHERE sent_at IS NOT NULL;
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_events_finished_idx" ON "webhook_events" USING btree ("finished_at") WHERE state <> 'pending';