export { newIdempotencyKey } from '@letters/sdk'

/** Whether an answer means nothing was created, so the same key may go with another body: a 4xx other than 409 ("still in flight"). */
export const nothingCreated = (status: number | undefined) => status !== undefined && status >= 400 && status < 500 && status !== 409
