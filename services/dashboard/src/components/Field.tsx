import { useId, type ChangeEvent, type ReactElement, type ReactNode } from 'react'

export interface ControlProps {
  id: string
  'aria-describedby'?: string
  'aria-invalid'?: true
}

/**
 * A labelled control with its hint and its error beside it: the label names the control exactly
 * (hints such as "opcional" stay outside it), and the hint and the error describe it.
 */
export function Field({
  label,
  hint,
  error,
  children,
  className,
}: {
  label: string
  hint?: ReactNode
  error?: string
  className?: string
  children: (props: ControlProps) => ReactElement
}) {
  const id = useId()
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ')
  return (
    <div className={`field${error ? ' field-invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}</label>
      {hint && (
        <span id={hintId} className="hint">
          {hint}
        </span>
      )}
      {children({ id, ...(describedBy ? { 'aria-describedby': describedBy } : {}), ...(error ? { 'aria-invalid': true as const } : {}) })}
      {error && (
        <span id={errorId} className="field-error">
          {error}
        </span>
      )}
    </div>
  )
}

/**
 * A file input in the page's words: the browser's own button speaks its language ("Choose File",
 * "No file chosen"), so the input is unseen but still in the page, focusable and named by `label`;
 * the button people see is its <label> (a click on it opens the browser's file picker), and the
 * chosen file's name is beside it. Focus on the input draws the ring around that button.
 */
export function FilePicker({
  label,
  button,
  hint,
  accept,
  fileName,
  error,
  onChange,
}: {
  label: string
  button: string
  hint?: ReactNode
  accept?: string
  fileName: string | undefined
  error?: string
  onChange: (event: ChangeEvent<HTMLInputElement>) => void
}) {
  const id = useId()
  const labelId = `${id}-label`
  const nameId = `${id}-name`
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [nameId, hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ')
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <span id={labelId} className="field-label">
        {label}
      </span>
      {hint && (
        <span id={hintId} className="hint">
          {hint}
        </span>
      )}
      <div className="file-picker">
        <input
          id={id}
          type="file"
          className="file-input"
          accept={accept}
          aria-labelledby={labelId}
          aria-describedby={describedBy}
          {...(error ? { 'aria-invalid': true as const } : {})}
          onChange={onChange}
        />
        <label htmlFor={id} className="button-link file-button">
          {button}
        </label>
        <span id={nameId} className={fileName ? 'file-name chosen' : 'file-name'}>
          {fileName ?? 'Ningún archivo elegido'}
        </span>
      </div>
      {error && (
        <span id={errorId} className="field-error">
          {error}
        </span>
      )}
    </div>
  )
}
