CREATE TABLE "schema_compatibility" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"oldest_code_migration" text NOT NULL,
	CONSTRAINT "schema_compatibility_one_row" CHECK ("schema_compatibility"."singleton")
);
--> statement-breakpoint
-- This migration only adds: code written against the migration before it still runs.
INSERT INTO "schema_compatibility" ("oldest_code_migration") VALUES ('0010_letter_status_check');
