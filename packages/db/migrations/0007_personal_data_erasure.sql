ALTER TABLE "letters" ADD COLUMN "personal_data_erased_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "artifacts_removed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "print_batches" ADD COLUMN "artifacts_removed_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "letters_erasable_updated_idx" ON "letters" USING btree ("updated_at") WHERE personal_data_erased_at IS NULL AND status IN ('printed', 'mailed', 'cancelled', 'address_rejected', 'failed');--> statement-breakpoint
CREATE INDEX "letters_erasable_account_idx" ON "letters" USING btree ("account_id") WHERE personal_data_erased_at IS NULL AND status IN ('printed', 'mailed', 'cancelled', 'address_rejected', 'failed');--> statement-breakpoint
CREATE INDEX "letters_artifacts_pending_idx" ON "letters" USING btree ("personal_data_erased_at") WHERE personal_data_erased_at IS NOT NULL AND artifacts_removed_at IS NULL;--> statement-breakpoint
CREATE INDEX "print_batches_artifacts_pending_idx" ON "print_batches" USING btree ("id") WHERE status = 'handed' AND artifacts_removed_at IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_events_letter_idx" ON "webhook_events" USING btree ((("body"::json -> 'data') ->> 'id'));