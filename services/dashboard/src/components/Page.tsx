import { useEffect, useRef, type ReactNode } from 'react'
import { useLocation } from 'react-router'

/** The path whose title last took the focus: the first page keeps the browser's focus where it is. */
let focusedPath: string | undefined

/**
 * A page's title: the tab's title, and its one <h1>. After a navigation to another path inside the
 * app, focus moves to the heading, so that a screen reader announces the new page and Tab starts
 * from there; a page that shows its loading state first and then its content does it once, and a
 * change of the query alone (a filter) leaves the focus where it is.
 */
export function PageTitle({ children, title }: { children: ReactNode; title: string }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const { pathname } = useLocation()
  useEffect(() => {
    document.title = `${title} · Cartas a mano`
  }, [title])
  useEffect(() => {
    if (focusedPath !== undefined && focusedPath !== pathname) heading.current?.focus()
    focusedPath = pathname
  }, [pathname])
  return (
    <h1 ref={heading} tabIndex={-1} className="page-title">
      {children}
    </h1>
  )
}

export function Page({ title, children, lead }: { title: string; children: ReactNode; lead?: ReactNode }) {
  return (
    <>
      <PageTitle title={title}>{title}</PageTitle>
      {lead && <p className="lead">{lead}</p>}
      {children}
    </>
  )
}
