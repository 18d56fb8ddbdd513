import type { CardFormat, CardProduction, EnvelopeFormat } from '@letters/contracts'

/**
 * What a letter's designs add to its drawing, as the production worker loads them from the
 * letter's print spec and the artwork versions it names. Every image is the artwork's print form,
 * made once when it was uploaded (@letters/artwork), never the file as uploaded.
 */
export interface DesignToRender {
  card: {
    format: CardFormat
    production: CardProduction
    /**
     * The design's artwork: a JPEG covering the card's trim plus BLEED_MM on every side, at 300
     * dpi (an artwork of another shape is refused rather than printed stretched). Null: no front
     * page. A `preprinted` card's stock carries its front: its artwork is shown in the proof only,
     * never printed (printsFront).
     */
    front: Uint8Array | null
  }
  envelope: {
    format: EnvelopeFormat
    /** `#RRGGBB`: the paper's colour, shown in proofs only (the floor loads the paper). */
    paperColor: string | null
    /** A PNG (transparency kept), drawn fitted into 45 × 18 mm in the sender's corner, above the return address. The plotter leaves its place empty. */
    logo: Uint8Array | null
  }
  /**
   * The signature's drawing, placed under the message instead of the sender's name. `paths`:
   * absolute SVG path data (M, L, C, Q, Z only) in a `width` × `height` box with y down; the
   * printer fills nothing and strokes each path with a pen's line, the plotter draws each path
   * (its curves flattened). `image`: a transparent PNG of `width` × `height` pixels, which the
   * plotter cannot draw: its cards are signed with the sender's name.
   */
  signature: { kind: 'paths'; width: number; height: number; paths: string[] } | { kind: 'image'; width: number; height: number; png: Uint8Array } | null
  /** The sender's return address, line by line, as it goes small in the envelope's top-left corner. Null: the sender's name alone, as before. */
  returnAddressLines: string[] | null
}
