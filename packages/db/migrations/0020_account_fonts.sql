-- An account's own fonts and every version of their files; a letter in one keeps the font and
-- the version it was accepted with. The letters' two columns are null for a built-in hand, as on
-- every letter already there: adding them rewrites nothing, and their constraints are NOT VALID,
-- so that the letters already there (all null, which both allow) are not scanned under the
-- table's lock.
CREATE TABLE "account_font_files" (
	"font_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"content_type" text NOT NULL,
	"bytes" integer NOT NULL,
	"sha256" text NOT NULL,
	"original" "bytea" NOT NULL,
	"face" "bytea" NOT NULL,
	"preview" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_font_files_font_id_version_pk" PRIMARY KEY("font_id","version"),
	CONSTRAINT "account_font_files_version_positive" CHECK ("account_font_files"."version" > 0)
);
--> statement-breakpoint
CREATE TABLE "account_fonts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"name" text NOT NULL,
	"family" text NOT NULL,
	"plotter_font" text DEFAULT 'caveat' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "font_id" uuid;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "font_version" integer;--> statement-breakpoint
ALTER TABLE "account_font_files" ADD CONSTRAINT "account_font_files_font_id_account_fonts_id_fk" FOREIGN KEY ("font_id") REFERENCES "public"."account_fonts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_fonts" ADD CONSTRAINT "account_fonts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "account_fonts_account_name_unique" ON "account_fonts" USING btree ("account_id","name");--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_font_version_fk" FOREIGN KEY ("font_id","font_version") REFERENCES "public"."account_font_files"("font_id","version") ON DELETE no action ON UPDATE no action NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_font_both_or_neither" CHECK (("letters"."font_id" IS NULL) = ("letters"."font_version" IS NULL)) NOT VALID;