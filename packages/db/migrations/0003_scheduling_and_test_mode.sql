DROP INDEX "letters_account_created_idx";--> statement-breakpoint
DROP INDEX "webhook_endpoints_account_idx";--> statement-breakpoint
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_account_id_key_pk";--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_livemode_key_pk" PRIMARY KEY("account_id","livemode","key");--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "send_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "letters_account_mode_created_idx" ON "letters" USING btree ("account_id","livemode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "letters_scheduled_idx" ON "letters" USING btree ("send_at") WHERE status = 'scheduled';--> statement-breakpoint
CREATE INDEX "letters_test_printed_idx" ON "letters" USING btree ("updated_at") WHERE status = 'printed' AND NOT livemode;--> statement-breakpoint
CREATE INDEX "webhook_endpoints_account_idx" ON "webhook_endpoints" USING btree ("account_id","livemode","created_at");