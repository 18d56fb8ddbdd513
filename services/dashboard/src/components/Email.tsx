/**
 * An email address that wraps, when it must, after its "@" and nowhere else: each part stays
 * whole (a hyphen is no place to cut "gestoria-sur.es"); only a part wider than the line is cut.
 * Its text is the address as it is, for copying and for screen readers.
 */
export function Email({ address, className }: { address: string; className?: string }) {
  const at = address.lastIndexOf('@')
  const parts = at > 0 ? [address.slice(0, at + 1), address.slice(at + 1)] : [address]
  return (
    <span className={className ? `email ${className}` : 'email'}>
      {parts.map((part, index) => (
        <span key={index} className="email-part">
          {part}
        </span>
      ))}
    </span>
  )
}
