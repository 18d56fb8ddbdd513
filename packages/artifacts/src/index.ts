export { LocalArtifactStore, writeWhole, type ArtifactStore } from './artifact-store.js'
