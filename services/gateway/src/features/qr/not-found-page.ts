/**
 * What a person who scanned a code no letter has reads: a page in Spanish, not the API's JSON,
 * since they came with a phone's camera, not a client. Its style is inline (the CSP allows inline
 * styles) and it loads nothing.
 */
export const NOT_FOUND_PAGE = `<!doctype html>
<html lang="es">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Enlace no encontrado</title>
<style>
  body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center; background: #faf7f2; color: #2b2b2b; font: 18px/1.5 Georgia, serif; }
  main { max-width: 28rem; padding: 2rem; text-align: center; }
  h1 { font-size: 1.4rem; font-weight: normal; margin: 0 0 1rem; }
  p { margin: 0; color: #555; }
</style>
</head>
<body>
<main>
<h1>Este código no lleva a ninguna carta</h1>
<p>El código que has escaneado no corresponde a ninguna de nuestras cartas. Comprueba que lo has escaneado entero o escríbele a quien te envió la carta.</p>
</main>
</body>
</html>
`
