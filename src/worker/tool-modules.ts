// Tool modules: ES modules whose default export is an array of tool definitions, and which may
// export a per-thread `setup`. The main thread loads them to own the registry; a worker loads
// the same URL to run `execute` (thread-setup.ts). What a worker reports names a module by its
// file name, never a host path.
// docs/contract.md: rule W1 — tool modules.
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ContractErrorCode } from "../contract/constants.js";
import { isToolContractError, ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { ArrayIsArray, isProxy, MapPrototypeSet, RegExpPrototypeExec } from "../contract/primordials.js";
import { ToolRegistry } from "../contract/tools.js";
import { describeFailure } from "../contract/untrusted.js";

/** Where a tool module lives: a URL, a `file:` URL string, or a filesystem path. */
export type ToolModuleSpecifier = URL | string;

/** The main thread's view of the loaded modules. */
export interface LoadedToolModules {
  readonly registry: ToolRegistry;
  /** The modules' URLs, in the order given. */
  readonly urls: readonly string[];
  /** Tool name → index in `urls` of the module that defines it. */
  readonly moduleOf: Map<string, number>;
  /** Whether any module exports a `setup` (a thread then takes up to `setupTimeoutMs` more to be ready). */
  readonly hasSetup: boolean;
}

/** The import URL of a specifier; relative paths resolve against the current directory. */
export function toolModuleUrl(specifier: ToolModuleSpecifier): string {
  if (specifier instanceof URL) return specifier.href;
  if (typeof specifier !== "string" || specifier.length === 0) {
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_MODULE, "a tool module must be a URL, a file URL string or a path");
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) && !isAbsolute(specifier)) return new URL(specifier).href;
  return pathToFileURL(resolve(specifier)).href;
}

/** The file name of a module URL: how a worker names a module in what the model may read. */
export function moduleFileName(url: string): string {
  const path = RegExpPrototypeExec(/[^/?#]*(?=[?#]|$)/, url);
  return path === null || path[0].length === 0 ? "(unnamed module)" : path[0];
}

/**
 * A tool module's optional `setup` export: called once in each worker thread after the module
 * loads (never on the main thread); its resolved value is `context.app` of the module's tools
 * in that thread. `signal` aborts (a TimeoutError) when `setupTimeoutMs` runs out.
 */
export type ToolModuleSetup = (context: ToolModuleSetupContext) => unknown;

/** What `setup` receives. Frozen. */
export interface ToolModuleSetupContext {
  readonly threadId: number;
  readonly signal: AbortSignal;
}

/** What a tool module exports: its tool definitions, and its per-thread setup if it has one. */
export interface ToolModuleExports {
  readonly definitions: unknown[];
  readonly setup: ToolModuleSetup | undefined;
}

/**
 * Imports a tool module: its default export must be an array, its `setup` export (if any) a
 * function. `label` names it in errors.
 */
export async function importToolModule(url: string, label = url): Promise<ToolModuleExports> {
  let namespace: { default?: unknown; setup?: unknown };
  try {
    namespace = (await import(url)) as { default?: unknown; setup?: unknown };
  } catch (error) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_MODULE,
      `tool module ${label} could not be loaded: ${describeFailure(error).text}`,
      {
        cause: error,
      },
    );
  }
  const definitions = namespace.default;
  if (!ArrayIsArray(definitions) || isProxy(definitions)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_MODULE,
      `tool module ${label} must default-export an array of tool definitions`,
    );
  }
  const setup = namespace.setup; // a module namespace: a binding, never a getter
  if (setup !== undefined && (typeof setup !== "function" || isProxy(setup))) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_MODULE,
      `tool module ${label}: its setup export must be a function (got ${describeValue(setup)})`,
    );
  }
  return { definitions, setup: setup as ToolModuleSetup | undefined };
}

/** The registry of one module's tools; errors name the module. */
export function registryOfModule(label: string, definitions: readonly unknown[]): ToolRegistry {
  return inModule(label, () => new ToolRegistry(definitions as never));
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
export const failureText = (error: unknown): string => (isToolContractError(error) ? error.message : describeFailure(error).text);

/** Loads every module on this thread into one registry (names unique across modules). */
export async function loadToolModules(specifiers: readonly ToolModuleSpecifier[]): Promise<LoadedToolModules> {
  const registry = new ToolRegistry();
  const urls: string[] = [];
  const moduleOf = new Map<string, number>();
  let hasSetup = false;
  for (let index = 0; index < specifiers.length; index += 1) {
    const url = toolModuleUrl(specifiers[index] as ToolModuleSpecifier);
    urls.push(url);
    const { definitions, setup } = await importToolModule(url);
    if (setup !== undefined) hasSetup = true;
    const own = registryOfModule(url, definitions);
    const names = own.names();
    const tools = names.map((name) => own.get(name));
    inModule(url, () => registry.registerMany(tools as never));
    for (let position = 0; position < names.length; position += 1) MapPrototypeSet(moduleOf, names[position] as string, index);
  }
  return { registry, urls, moduleOf, hasSetup };
}
