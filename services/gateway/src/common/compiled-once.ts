/**
 * A process-wide memo of what is compiled from a schema object: the route schemas are module
 * constants and what is compiled from one is a pure function of it, so every app a process builds
 * (the test suite builds a hundred in a few processes) shares one compilation. `compile` runs the
 * first time a schema is asked for.
 */
export function compiledOnce<Schema extends object, Compiled>(): (schema: Schema, compile: () => Compiled) => Compiled {
  const compiled = new WeakMap<Schema, Compiled>()
  return (schema, compile) => {
    let found = compiled.get(schema)
    if (found === undefined) compiled.set(schema, (found = compile()))
    return found
  }
}
