-- migrate: no-transaction
-- The operator's list of every account's letters, newest first (GET /admin/cards without an
-- account), reads this index instead of sorting every letter; built without blocking writes, and
-- safe to run again after an interrupted build.
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS "letters_created_idx" ON "letters" USING btree ("created_at" DESC NULLS LAST,"id" DESC NULLS LAST);
