// Tool modules: ES modules whose default export is an array of tool definitions. The main
// thread loads them to own the registry; a worker loads the same URL to run `execute`, each
// module within its own time (a module whose top-level await never settles fails, it does not
// hang the thread). What a worker reports names a module by its file name, never a host path.
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { COURSE_TOOL_INVALID_TOOL_MODULE } from "../contract/constants.js";
import type { CourseTool } from "../contract/definition.js";
import { isToolContractError, ToolContractError } from "../contract/errors.js";
import { describeFailure } from "../contract/failure.js";
import {
  ArrayIsArray,
  isProxy,
  MapPrototypeSet,
  NativePromise,
  PromisePrototypeThen,
  RegExpPrototypeExec,
} from "../contract/primordials.js";
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

/** The file name of a module URL: how a worker names a module in what the model may read. */
export function moduleFileName(url: string): string {
  const path = RegExpPrototypeExec(/[^/?#]*(?=[?#]|$)/, url);
  return path === null || path[0].length === 0 ? "(unnamed module)" : path[0];
}

/** Imports a tool module and returns its default export, which must be an array. `label` names it in errors. */
export async function importToolModule(url: string, label = url): Promise<unknown[]> {
  let namespace: { default?: unknown };
  try {
    namespace = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new ToolContractError(
      COURSE_TOOL_INVALID_TOOL_MODULE,
      `tool module ${label} could not be loaded: ${describeFailure(error).text}`,
      {
        cause: error,
      },
    );
  }
  const definitions = namespace.default;
  if (!ArrayIsArray(definitions) || isProxy(definitions)) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_MODULE, `tool module ${label} must default-export an array of tool definitions`);
  }
  return definitions;
}

/** The registry of one module's tools; errors name the module. */
export function registryOfModule(label: string, definitions: readonly unknown[]): ToolRegistry {
  return inModule(label, () => new ToolRegistry(definitions as never));
}

/** A worker's tools of one module, by name, or why the module did not load within `timeoutMs`. */
export type WorkerModule =
  | { readonly ok: true; readonly tools: Map<string, CourseTool> }
  | { readonly ok: false; readonly failure: string };

/** A module's load result; an own `then` (undefined) keeps a `then` a tool module planted on a prototype from adopting it. */
class ModuleLoad {
  // biome-ignore lint/suspicious/noThenProperty: see above.
  readonly then = undefined;
  constructor(
    readonly ok: boolean,
    readonly tools: Map<string, CourseTool> | undefined,
    readonly failure: string | undefined,
  ) {}
}

const loadedModule = (tools: Map<string, CourseTool>): WorkerModule => new ModuleLoad(true, tools, undefined) as WorkerModule;
const failedModule = (failure: string): WorkerModule => new ModuleLoad(false, undefined, failure) as WorkerModule;

/** Loads a module in a worker thread: never rejects, and settles within `timeoutMs`. */
export function loadModuleInWorker(url: string, timeoutMs: number): Promise<WorkerModule> {
  const name = moduleFileName(url);
  return new NativePromise<WorkerModule>((resolve) => {
    // A ref'd timer: a top-level await that never settles must not let the thread's loop run dry.
    const timer = setTimeout(
      () => resolve(failedModule(`tool module ${name} did not finish loading in a worker thread within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const settle = (module: WorkerModule): void => {
      clearTimeout(timer);
      resolve(module);
    };
    void PromisePrototypeThen(
      importToolModule(url, name),
      (definitions) => {
        try {
          const registry = registryOfModule(name, definitions);
          const tools = new Map<string, CourseTool>();
          const names = registry.names();
          for (let index = 0; index < names.length; index += 1) {
            MapPrototypeSet(tools, names[index] as string, registry.get(names[index] as string) as CourseTool);
          }
          settle(loadedModule(tools));
        } catch (error) {
          settle(failedModule(failureText(error)));
        }
      },
      (error: unknown) => settle(failedModule(failureText(error))),
    );
  });
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

/** Our own errors already name the module; anything else is described safely. */
const failureText = (error: unknown): string => (isToolContractError(error) ? error.message : describeFailure(error).text);

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
