-- migrate: no-transaction
-- A batch holds one ink, as it holds one card stock and one envelope stock: the open tray is one
-- per stocks and ink. The column's constant default adds it without a rewrite (batches already
-- there hold black letters). The new unique index is built before the old one goes, so there is
-- never a moment without one; each statement can be run again after an interrupted build. The
-- check is NOT VALID: the rows there hold the default.
-- squawk-ignore-file ban-concurrent-index-creation-in-transaction
ALTER TABLE "print_batches" ADD COLUMN IF NOT EXISTS "ink_color" text DEFAULT 'black' NOT NULL;
--> statement-breakpoint
ALTER TABLE "print_batches" DROP CONSTRAINT IF EXISTS "print_batches_ink_color_known";
--> statement-breakpoint
ALTER TABLE "print_batches" ADD CONSTRAINT "print_batches_ink_color_known" CHECK (ink_color IN ('blue', 'black', 'green', 'purple', 'red')) NOT VALID;
--> statement-breakpoint
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "print_batches_one_open_per_stock_and_ink" ON "print_batches" USING btree ("card_stock","envelope_stock","ink_color") WHERE status = 'open';
--> statement-breakpoint
DROP INDEX CONCURRENTLY IF EXISTS "print_batches_one_open_per_stock";
