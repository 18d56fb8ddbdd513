-- A letter erased while the post has it keeps its address's suppression key (a hash) and postal
-- code, so that a return after the erasure still puts the address on the suppression list. Two
-- nullable columns: no rewrite of the table, no default to fill.
ALTER TABLE "letters" ADD COLUMN "return_address_key" text;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "return_zip" text;