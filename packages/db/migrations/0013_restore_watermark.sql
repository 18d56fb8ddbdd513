CREATE TABLE "database_restores" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"detected_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reconciled_at" timestamp with time zone,
	"source" text NOT NULL,
	"database_counter" bigint,
	"journal_counter" bigint
);
--> statement-breakpoint
CREATE TABLE "restore_watermark" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"counter" bigint NOT NULL,
	CONSTRAINT "restore_watermark_one_row" CHECK ("restore_watermark"."singleton")
);
--> statement-breakpoint
INSERT INTO "restore_watermark" ("counter") VALUES (0);
