CREATE TABLE "events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"letter_id" uuid NOT NULL,
	"type" text NOT NULL,
	"sequence" integer NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"body" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "next_attempt_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "leased_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "lease_id" uuid;--> statement-breakpoint
-- A delivery pending from the release before waited for its next attempt in a delayed BullMQ job,
-- which now finds no lease and ends: it keeps that time, the one its last attempt scheduled (due
-- now when no attempt says), instead of being sent at once with every other. One never tried yet
-- stays null: due since it was written, in the order it was.
WITH "last_attempt" AS (
	SELECT DISTINCT ON (a."event_id") a."event_id", a."next_attempt_at"
	FROM "webhook_attempts" a JOIN "webhook_events" e ON e."id" = a."event_id"
	WHERE e."state" = 'pending' AND e."attempts" > 0
	ORDER BY a."event_id", a."attempt" DESC, a."id" DESC
)
UPDATE "webhook_events" e SET "next_attempt_at" = coalesce(l."next_attempt_at", now())
FROM "webhook_events" p LEFT JOIN "last_attempt" l ON l."event_id" = p."id"
WHERE p."id" = e."id" AND e."state" = 'pending' AND e."attempts" > 0;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_letter_id_letters_id_fk" FOREIGN KEY ("letter_id") REFERENCES "public"."letters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_account_idx" ON "events" USING btree ("account_id","livemode","occurred_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_account_type_idx" ON "events" USING btree ("account_id","livemode","type","occurred_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "events_letter_idx" ON "events" USING btree ("letter_id","sequence");--> statement-breakpoint
CREATE INDEX "events_occurred_idx" ON "events" USING btree ("occurred_at");--> statement-breakpoint
CREATE INDEX "webhook_events_due_idx" ON "webhook_events" USING btree ("endpoint_id",coalesce("next_attempt_at", "created_at"),"id") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_events_leased_idx" ON "webhook_events" USING btree ("endpoint_id","leased_until") WHERE state = 'pending' AND leased_until IS NOT NULL;