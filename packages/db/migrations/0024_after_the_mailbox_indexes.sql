-- migrate: no-transaction
-- The indexes after-the-mailbox needs on letters, built without blocking their writes, each
-- statement safe to run again after an interrupted build: a QR link finds its letter by its code,
-- and the erasure's partial indexes take in returned letters (erasableStatuses).
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS "letters_erasable_updated_idx";
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "letters_erasable_account_idx";
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "letters_tracking_code_unique" ON "letters" USING btree ("tracking_code") WHERE tracking_code IS NOT NULL;
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_erasable_updated_idx" ON "letters" USING btree ("updated_at") WHERE personal_data_erased_at IS NULL AND status IN ('printed', 'mailed', 'returned', 'cancelled', 'address_rejected', 'failed');
--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_erasable_account_idx" ON "letters" USING btree ("account_id") WHERE personal_data_erased_at IS NULL AND status IN ('printed', 'mailed', 'returned', 'cancelled', 'address_rejected', 'failed');
