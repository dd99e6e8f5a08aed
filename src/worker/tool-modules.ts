// Tool modules: ES modules whose default export is an array of tool definitions. The main
// thread loads them to own the registry; a worker loads the same URL to run `execute`.
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { COURSE_TOOL_INVALID_TOOL_MODULE } from "../contract/constants.js";
import { isToolContractError, ToolContractError } from "../contract/errors.js";
import { describeFailure } from "../contract/failure.js";
import { ArrayIsArray, isProxy, MapPrototypeSet } from "../contract/primordials.js";
import { ToolRegistry } from "../contract/registry.js";

/** Where a tool module lives: a URL, a `file:` URL string, or a filesystem path. */
export type ToolModuleSpecifier = URL | string;

/** The main thread's view of the loaded modules. */
export interface LoadedToolModules {
  readonly registry: ToolRegistry;
  /** The modules' URLs, in the order given. */
  readonly urls: readonly string[];
  /** Tool name → index in `urls` of the module that defines it. */
  readonly moduleOf: Map<string, number>;
}

/** The import URL of a specifier; relative paths resolve against the current directory. */
function toolModuleUrl(specifier: ToolModuleSpecifier): string {
  if (specifier instanceof URL) return specifier.href;
  if (typeof specifier !== "string" || specifier.length === 0) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_MODULE, "a tool module must be a URL, a file URL string or a path");
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) && !isAbsolute(specifier)) return new URL(specifier).href;
  return pathToFileURL(resolve(specifier)).href;
}

/** Imports a tool module and returns its default export, which must be an array. */
export async function importToolModule(url: string): Promise<unknown[]> {
  let namespace: { default?: unknown };
  try {
    namespace = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_MODULE, `tool module ${url} could not be loaded: ${describeFailure(error).text}`, {
      cause: error,
    });
  }
  const definitions = namespace.default;
  if (!ArrayIsArray(definitions) || isProxy(definitions)) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_MODULE, `tool module ${url} must default-export an array of tool definitions`);
  }
  return definitions;
}

/** The registry of one module's tools; errors name the module. */
export function registryOfModule(url: string, definitions: readonly unknown[]): ToolRegistry {
  return inModule(url, () => new ToolRegistry(definitions as never));
}

/** Runs a registration step, prefixing any contract error with the module's URL. */
function inModule<T>(url: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (!isToolContractError(error)) throw error;
    throw new ToolContractError(error.code, `tool module ${url}: ${error.message}`, { cause: error });
  }
}

/** Loads every module on this thread into one registry (names unique across modules). */
export async function loadToolModules(specifiers: readonly ToolModuleSpecifier[]): Promise<LoadedToolModules> {
  const registry = new ToolRegistry();
  const urls: string[] = [];
  const moduleOf = new Map<string, number>();
  for (let index = 0; index < specifiers.length; index += 1) {
    const url = toolModuleUrl(specifiers[index] as ToolModuleSpecifier);
    urls.push(url);
    const own = registryOfModule(url, await importToolModule(url));
    const names = own.names();
    const tools = names.map((name) => own.get(name));
    inModule(url, () => registry.registerMany(tools as never));
    for (let position = 0; position < names.length; position += 1) MapPrototypeSet(moduleOf, names[position] as string, index);
  }
  return { registry, urls, moduleOf };
}
