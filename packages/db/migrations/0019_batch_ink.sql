-- migrate: no-transaction
-- A batch holds one ink, as it holds one card stock and one envelope stock: the open tray is one
-- per stocks and ink (its column comes with 0018). The new unique index is built before the old
-- one goes, so there is never a moment without one; each statement can be run again after an
-- interrupted build.
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "print_batches_one_open_per_stock_and_ink" ON "print_batches" USING btree ("card_stock","envelope_stock","ink_color") WHERE status = 'open';
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "print_batches_one_open_per_stock";
