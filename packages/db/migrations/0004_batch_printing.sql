-- A letter's short code: 10 characters of Crockford's base32 (no I, L, O, U) taken from 50 bits
-- of the md5 of its id. Immutable, so `letters.code` is a stored generated column: every letter
-- gets it when inserted, and the existing ones get it when the column is added below.
CREATE FUNCTION letter_code(letter_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((('x' || substr(md5(letter_id::text), 1, 13))::bit(52)::bigint) >> (5 * (9 - i))) & 31)::int + 1, 1), '' ORDER BY i)
  FROM generate_series(0, 9) AS i
$$;--> statement-breakpoint
CREATE TABLE "print_batch_handoffs" (
	"batch_id" uuid NOT NULL,
	"file" text NOT NULL,
	"printer" text NOT NULL,
	"handed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "print_batch_handoffs_batch_id_file_pk" PRIMARY KEY("batch_id","file")
);
--> statement-breakpoint
CREATE TABLE "print_batch_letters" (
	"batch_id" uuid NOT NULL,
	"letter_id" uuid NOT NULL,
	"sequence" integer,
	"added_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "print_batch_letters_letter_id_pk" PRIMARY KEY("letter_id")
);
--> statement-breakpoint
CREATE TABLE "print_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	"handed_at" timestamp with time zone,
	"letter_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "code" text GENERATED ALWAYS AS (letter_code(id)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "print_batch_handoffs" ADD CONSTRAINT "print_batch_handoffs_batch_id_print_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."print_batches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "print_batch_letters" ADD CONSTRAINT "print_batch_letters_batch_id_print_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."print_batches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "print_batch_letters" ADD CONSTRAINT "print_batch_letters_letter_id_letters_id_fk" FOREIGN KEY ("letter_id") REFERENCES "public"."letters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "print_batch_letters_batch_idx" ON "print_batch_letters" USING btree ("batch_id");--> statement-breakpoint
CREATE UNIQUE INDEX "print_batch_letters_sequence_unique" ON "print_batch_letters" USING btree ("batch_id","sequence");--> statement-breakpoint
CREATE UNIQUE INDEX "print_batches_one_open" ON "print_batches" USING btree ((true)) WHERE status = 'open';--> statement-breakpoint
CREATE INDEX "print_batches_status_idx" ON "print_batches" USING btree ("status","opened_at");--> statement-breakpoint
CREATE UNIQUE INDEX "letters_code_unique" ON "letters" USING btree ("code");