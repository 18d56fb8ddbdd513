/** A Content-Type's media type: `font/WOFF2; charset=binary` is `font/woff2`, since clients and proxies add parameters and capitals. */
export function mediaType(header: string): string {
  return header.split(';')[0]!.trim().toLowerCase()
}
