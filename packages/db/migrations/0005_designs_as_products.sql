CREATE TABLE "artworks" (
	"owner_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"account_id" uuid NOT NULL,
	"use" text NOT NULL,
	"format" text,
	"content_type" text NOT NULL,
	"bytes" integer NOT NULL,
	"sha256" text NOT NULL,
	"original" "bytea" NOT NULL,
	"print" "bytea" NOT NULL,
	"preview" "bytea" NOT NULL,
	"drawing" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "artworks_owner_id_version_pk" PRIMARY KEY("owner_id","version"),
	CONSTRAINT "artworks_version_positive" CHECK ("artworks"."version" > 0)
);
--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "signature_id" uuid;--> statement-breakpoint
ALTER TABLE "card_designs" ADD COLUMN "format" text DEFAULT 'A6' NOT NULL;--> statement-breakpoint
ALTER TABLE "card_designs" ADD COLUMN "production" text DEFAULT 'printed' NOT NULL;--> statement-breakpoint
ALTER TABLE "card_designs" ADD COLUMN "stock_code" text;--> statement-breakpoint
ALTER TABLE "envelope_designs" ADD COLUMN "format" text DEFAULT 'C6' NOT NULL;--> statement-breakpoint
ALTER TABLE "envelope_designs" ADD COLUMN "stock_code" text;--> statement-breakpoint
ALTER TABLE "envelope_designs" ADD COLUMN "paper_color" text;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "signature_id" uuid;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "address_lines" jsonb;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "print_spec" jsonb;--> statement-breakpoint
ALTER TABLE "print_batches" ADD COLUMN "card_stock" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "print_batches" ADD COLUMN "envelope_stock" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "senders" ADD COLUMN "return_address" jsonb;--> statement-breakpoint
ALTER TABLE "artworks" ADD CONSTRAINT "artworks_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_signature_id_signatures_id_fk" FOREIGN KEY ("signature_id") REFERENCES "public"."signatures"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- NOT VALID: the constraint holds for every row written from now on, and the existing letters
-- (all null in the new column) are not scanned under a lock that would block their writes.
ALTER TABLE "letters" ADD CONSTRAINT "letters_signature_id_signatures_id_fk" FOREIGN KEY ("signature_id") REFERENCES "public"."signatures"("id") ON DELETE no action ON UPDATE no action NOT VALID;--> statement-breakpoint
CREATE UNIQUE INDEX "print_batches_one_open_per_stock" ON "print_batches" USING btree ("card_stock","envelope_stock") WHERE status = 'open';--> statement-breakpoint
DROP INDEX "print_batches_one_open";--> statement-breakpoint
-- What a letter is printed with, fixed when it is accepted: its designs as they are now, the
-- latest version of each artwork made for the design's format, its signature, and its sender's
-- name and return address. The intake calls it in the statement that stores and charges the
-- letter, so an upload or a change made after never alters a letter already paid for. Its shape
-- is PrintSpec (packages/contracts), which a test checks a stored spec against.
CREATE FUNCTION letter_print_spec(card uuid, envelope uuid, sender uuid, signature uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT jsonb_build_object(
    'card', (SELECT jsonb_build_object('designId', d.id, 'name', d.name, 'format', d.format, 'production', d.production, 'stockCode', d.stock_code,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = d.id AND a.format = d.format ORDER BY a.version DESC LIMIT 1))
             FROM card_designs d WHERE d.id = card),
    'envelope', (SELECT jsonb_build_object('designId', d.id, 'name', d.name, 'format', d.format, 'stockCode', d.stock_code, 'paperColor', d.paper_color,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = d.id AND a.format = d.format ORDER BY a.version DESC LIMIT 1))
             FROM envelope_designs d WHERE d.id = envelope),
    'signature', (SELECT jsonb_build_object('id', s.id,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = s.id ORDER BY a.version DESC LIMIT 1))
             FROM signatures s WHERE s.id = signature),
    'senderName', (SELECT s.name FROM senders s WHERE s.id = sender),
    'returnAddress', (SELECT s.return_address FROM senders s WHERE s.id = sender))
$$;