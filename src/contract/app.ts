// The application's own context (a database handle, an HTTP client) that tools receive as
// `context.app`. Typed by declaration merging, so neither the registry nor the executors
// carry a type parameter for it.
// docs/contract.md: rule 7 — execution context; docs/operations.md — Application context.

/**
 * What `context.app` holds. Empty here; a program declares its own fields once:
 *
 * ```ts
 * declare module "toolgate" {
 *   interface ToolApp { db: Database; http: HttpClient }
 * }
 * ```
 *
 * The executor's `app` option and `CallOptions.app` are then checked against it, and every
 * tool's `context.app` is typed by it. toolgate never reads the value: it is handed over as is.
 */
// biome-ignore lint/suspicious/noEmptyInterface: an interface (not a type) so that programs can merge their fields into it.
export interface ToolApp {}
