-- NOT VALID: the rows already there (written through the same enum) are not scanned under the
-- table's exclusive lock, while every new write is checked; a lock held by a long print hand-over
-- makes the migration fail within seconds rather than queue every query behind it.
SET LOCAL lock_timeout = '5s';--> statement-breakpoint
ALTER TABLE "letter_events" ADD CONSTRAINT "letter_events_status_known" CHECK (status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'address_rejected', 'cancelled', 'failed')) NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_status_known" CHECK (status IN ('scheduled', 'received', 'ready_for_print', 'printing', 'printed', 'mailed', 'address_rejected', 'cancelled', 'failed')) NOT VALID;
