import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler'

/** Compiled response serializers by schema object: the route schemas are module constants. */
const compiled = new WeakMap<object, Serializer>()

/**
 * Fastify's own serializer compiler (fast-json-stringify), each response schema compiled once per
 * process rather than once per app. Compiling the gateway's response schemas takes about half a
 * second of CPU, and a process that builds many apps (the test suite builds a hundred) paid it
 * for each. A serializer is a pure function of its schema (Fastify's compiler reads nothing else
 * of the route); a context with shared schemas (`addSchema`) or serializer options of its own is
 * compiled as Fastify would, uncached.
 */
export const sharedSerializers: SerializerFactory = (externalSchemas, serializerOptions) => {
  const compile = SerializerSelector()(externalSchemas, serializerOptions)
  const plain = Object.keys(externalSchemas ?? {}).length === 0 && Object.keys(serializerOptions ?? {}).length === 0
  return (route) => {
    const { schema } = route
    if (!plain || typeof schema !== 'object' || schema === null) return compile(route)
    let serialize = compiled.get(schema)
    if (!serialize) compiled.set(schema, (serialize = compile(route)))
    return serialize
  }
}
