CREATE TABLE "print_handoffs" (
	"letter_id" uuid NOT NULL,
	"file" text NOT NULL,
	"claim" integer NOT NULL,
	"printer" text NOT NULL,
	"handed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "print_handoffs_letter_id_file_pk" PRIMARY KEY("letter_id","file")
);
--> statement-breakpoint
DROP INDEX "letters_status_idx";--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "print_claim" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "print_handoffs" ADD CONSTRAINT "print_handoffs_letter_id_letters_id_fk" FOREIGN KEY ("letter_id") REFERENCES "public"."letters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "letters_status_updated_idx" ON "letters" USING btree ("status","updated_at");--> statement-breakpoint
CREATE INDEX "outbox_letter_idx" ON "outbox" USING btree (("payload" ->> 'letterId'),"queue","created_at");