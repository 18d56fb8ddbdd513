export { LocalArtifactStore, writeWhole, type ArtifactStore } from './artifact-store.js'
export { batchFileKey, batchFolder, batchFileKinds, batchFileMediaTypes, batchFileNames, type BatchFileKind } from './batch-files.js'
