-- Each letter keeps the drawing it was accepted with and its ink, a campaign may name its
-- letters' ink, and a print batch holds one ink. Letters and batches already there, and those a
-- release before this one writes during an upgrade, were drawn by glyph as their fonts have
-- them, in black: the defaults say so, and the new release writes both on every letter it
-- accepts. A constant default adds a column without rewriting the table. The checks are NOT
-- VALID: the rows already there hold the default or null, and are not scanned under the tables'
-- exclusive locks.
ALTER TABLE "campaigns" ADD COLUMN "ink_color" text;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "drawing" integer DEFAULT 4 NOT NULL;--> statement-breakpoint
ALTER TABLE "letters" ADD COLUMN "ink_color" text DEFAULT 'black' NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_ink_color_known" CHECK (ink_color IN ('blue', 'black', 'green', 'purple', 'red')) NOT VALID;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_ink_color_known" CHECK (ink_color IN ('blue', 'black', 'green', 'purple', 'red')) NOT VALID;--> statement-breakpoint
ALTER TABLE "print_batches" ADD COLUMN "ink_color" text DEFAULT 'black' NOT NULL;--> statement-breakpoint
ALTER TABLE "print_batches" ADD CONSTRAINT "print_batches_ink_color_known" CHECK (ink_color IN ('blue', 'black', 'green', 'purple', 'red')) NOT VALID;
