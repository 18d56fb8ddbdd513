/**
 * A client's text as a cell of a CSV that people open in Excel: Excel runs a cell starting with
 * = + - @ (or a tab or carriage return before them) as a formula (`=HYPERLINK(…)`, DDE), and one
 * set to Spanish also takes a semicolon as a cell's end. Such a start, of the text or after a
 * semicolon, gets an apostrophe, OWASP's advice: Excel shows the text, runs nothing.
 */
export function spreadsheetText(text: string): string {
  // A Spanish Excel splits a CSV at semicolons too, so every piece after one is a cell of its own.
  return text.replace(/(^|;)(?=[=+\-@\t\r])/g, "$1'")
}
