-- After the mailbox: a letter's QR code and its scans, a letter the post brings back, and the
-- addresses an account no longer writes to. The letters' checks are NOT VALID: every row written
-- from now on is checked, and the rows already there (none has a tracking URL or a return yet)
-- are not read under the table's lock. The indexes on letters come in the next migration, built
-- without blocking writes.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
CREATE TABLE "address_suppressions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"address_hash" text NOT NULL,
	"reason" text NOT NULL,
	"zip" text NOT NULL,
	"country" text NOT NULL,
	"letter_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "address_suppressions_reason_known" CHECK (reason IN ('unknown_recipient', 'bad_address', 'refused', 'moved', 'deceased', 'other'))
);--> statement-breakpoint
CREATE TABLE "qr_scans" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"letter_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "qr_scans_kind_known" CHECK (kind IN ('counted', 'prefetch', 'preview', 'limited'))
);--> statement-breakpoint
ALTER TABLE "letter_events" DROP CONSTRAINT "letter_events_status_known";--> statement-breakpoint
ALTER TABLE "letters" DROP CONSTRAINT "letters_status_known";--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "tracking_url" text;--> statement-breakpoint
ALTER TABLE "card_designs" ADD COLUMN "qr_placement" jsonb;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "tracking_url" text;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "tracking_code" text;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "qr_scans" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "first_scanned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "last_scanned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "returned_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "return_reason" text;--> statement-breakpoint
ALTER TABLE "address_suppressions" ADD CONSTRAINT "address_suppressions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "address_suppressions" ADD CONSTRAINT "address_suppressions_letter_id_letters_id_fk" FOREIGN KEY ("letter_id") REFERENCES "public"."letters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "qr_scans" ADD CONSTRAINT "qr_scans_letter_id_letters_id_fk" FOREIGN KEY ("letter_id") REFERENCES "public"."letters"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "address_suppressions_address_unique" ON "address_suppressions" USING btree ("account_id","livemode","address_hash");--> statement-breakpoint
CREATE INDEX "address_suppressions_account_idx" ON "address_suppressions" USING btree ("account_id","livemode","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "qr_scans_letter_idx" ON "qr_scans" USING btree ("letter_id","at");--> statement-breakpoint
ALTER TABLE "letter_events" ADD CONSTRAINT "letter_events_status_known" CHECK (status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'returned', 'address_rejected', 'cancelled', 'failed')) NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_tracking_both_or_neither" CHECK (("letters"."tracking_url" IS NULL) = ("letters"."tracking_code" IS NULL)) NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_return_reason_known" CHECK (return_reason IN ('unknown_recipient', 'bad_address', 'refused', 'moved', 'deceased', 'other')) NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_status_known" CHECK (status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'returned', 'address_rejected', 'cancelled', 'failed')) NOT VALID;--> statement-breakpoint
-- A letter's print spec keeps where its card design places the QR code.
CREATE OR REPLACE FUNCTION letter_print_spec_of(card uuid, envelope uuid, sender uuid, signature uuid) RETURNS TABLE (spec jsonb)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'card', (SELECT jsonb_build_object('designId', d.id, 'name', d.name, 'format', d.format, 'production', d.production, 'stockCode', d.stock_code,
               'artwork', (SELECT jsonb_build_object('version', a.version, 'sha256', a.sha256) FROM artworks a WHERE a.owner_id = d.id AND a.format = d.format ORDER BY a.version DESC LIMIT 1),
               'qrPlacement', d.qr_placement)
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
