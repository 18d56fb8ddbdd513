import { SerializerSelector, type Serializer, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'
import { compiledOnce } from '../../common/compiled-once.js'

/** The serializer of each plain response schema, once per process. */
const serializers = compiledOnce<object, Serializer>()

/**
 * Fastify's own serializer compiler (fast-json-stringify), each response schema compiled once per
 * process (compiledOnce) rather than once per app: compiling the gateway's response schemas takes
 * about half a second of CPU. Fastify's compiler reads nothing of the route but its schema; a
 * context with shared schemas (`addSchema`) or serializer options of its own is compiled as
 * Fastify would, uncached.
 */
export const sharedSerializers: SerializerFactory = (externalSchemas, serializerOptions) => {
  const compile = SerializerSelector()(externalSchemas, serializerOptions)
  const plain = Object.keys(externalSchemas ?? {}).length === 0 && Object.keys(serializerOptions ?? {}).length === 0
  return (route) => {
    const { schema } = route
    if (!plain || typeof schema !== 'object' || schema === null) return compile(route)
    return serializers(schema, () => compile(route))
  }
}
