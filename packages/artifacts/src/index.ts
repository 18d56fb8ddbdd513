export { LocalArtifactStore, writeWhole, type ArtifactStore } from './artifact-store.js'
export { batchFileKey, batchFolder, batchFileKinds, batchFileMediaTypes, batchFileNames, type BatchFileKind } from './batch-files.js'
export { PrintJournal, type BatchFileRecord, type BatchOnPaper, type LetterFileRecord, type LetterOnPaper } from './print-journal.js'
