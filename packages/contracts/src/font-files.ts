import { Type, type Static } from 'typebox'
import { FileVersion, Label, Literals, Nullable, Uuid, strict } from './common.js'
import { DEFAULT_FONT, fontNames } from './fonts.js'
import { FONT_MAX_BYTES, fontContentTypes } from './font-rules.js'

/** An account font's name: what its requests send as `fontName`. */
export const OWN_FONT_NAME = '^[a-z0-9][a-z0-9-]{1,39}$'

/** POST /admin/accounts/{id}/fonts: a font with no file yet. */
export const CreateAccountFontBody = Type.Object(
  {
    name: Type.String({
      pattern: OWN_FONT_NAME,
      errorMessage: "El campo 'name' debe tener de 2 a 40 letras minúsculas sin acentos, cifras o guiones, empezando por letra o cifra",
      description: 'The value `fontName` takes in requests: unique in the account, never a built-in hand’s name.',
    }),
    family: Label(),
    plotterFont: Type.Optional(
      Literals(fontNames, {
        errorMessage: `El campo 'plotterFont' debe ser una de las letras propias del plóter: ${fontNames.join(', ')}`,
        description: `The built-in hand whose single strokes the plotter writes this font's letters in; absent: ${DEFAULT_FONT}.`,
      }),
    ),
  },
  strict,
)
export type CreateAccountFontBody = Static<typeof CreateAccountFontBody>

/** An account font's file as the API shows it. Each upload is a new version; letters keep the version they were accepted with. */
export const AccountFontFile = FileVersion(fontContentTypes)
export type AccountFontFile = Static<typeof AccountFontFile>

export const AccountFont = Type.Object({
  name: Type.String(),
  family: Type.String(),
  plotterFont: Literals(fontNames),
  /** Null until a file is uploaded: until then no letter can be written in it. */
  file: Nullable(AccountFontFile),
})
export type AccountFont = Static<typeof AccountFont>

export const AccountFontParams = Type.Object({ id: Uuid(), name: Type.String({ maxLength: 64 }) })

/** A font upload's body: the file's bytes, as its Content-Type says. */
export const FontUpload = Type.Unsafe<Buffer>({
  type: 'string',
  format: 'binary',
  description: `The font file itself (not JSON), at most ${FONT_MAX_BYTES / 1024 / 1024} MB, sent with its Content-Type: ${fontContentTypes.join(', ')}.`,
})
