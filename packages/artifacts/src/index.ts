export { LocalArtifactStore, writeWhole, type ArtifactStore } from './artifact-store.js'
export { batchFileKey, batchFileKinds, batchFileMediaTypes, batchFileNames, type BatchFileKind } from './batch-files.js'
