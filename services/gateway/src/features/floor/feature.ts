import { routesOf, type Feature } from '../../common/feature.js'
import batchFiles from './routes/batch-files.js'
import page from './routes/page.js'
import scan from './routes/scan.js'

/** The production floor's pages: the batches to print, their files, and the scanner that hands letters to the post. */
export default { floor: routesOf(page, batchFiles, scan) } satisfies Feature
