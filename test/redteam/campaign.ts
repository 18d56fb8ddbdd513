/** The red team's campaign (nombre defaulting to "amigo", cupon without default), as overrides of the `campaign` fixture's. */
export const navidadCampaign = {
  name: 'Navidad',
  fontName: 'dancing-script',
  message: '¡Feliz Navidad, {{nombre}}! Usa {{cupon}} antes del 6 de enero.',
  variables: [
    { name: 'nombre', maxSize: 10, defaultValue: 'amigo', example: 'Lucía' },
    { name: 'cupon', maxSize: 8, defaultValue: null, example: 'NAVIDAD' },
  ],
}
