// ToolRegistry: owns frozen tool snapshots by name. Batches register atomically.
// docs/contract.md: rule 2 — atomic registration, rule 3 — registry snapshot.
import { COURSE_TOOL_DUPLICATE_TOOL_NAME, COURSE_TOOL_INVALID_ARGUMENT, COURSE_TOOL_INVALID_TOOL_DEFINITION } from "./constants.js";
import { type CourseTool, type CourseToolDefinition, defineTool, type SchemaToolDefinition } from "./definition.js";
import { isToolContractError, ToolContractError } from "./errors.js";
import {
  ArrayIsArray,
  isProxy,
  MapPrototypeGet,
  MapPrototypeGetSize,
  MapPrototypeHas,
  MapPrototypeSet,
  mapEntryStepper,
  mapKeyStepper,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
} from "./primordials.js";

/** Anything `ToolRegistry` accepts as one tool: a definition (either form) or a `defineTool` snapshot. */
// (Methods are bivariant in their parameters, so any CourseToolDefinition<A, O> fits.)
export type ToolLike = CourseToolDefinition | SchemaToolDefinition | CourseTool;

let toolsOf: (registry: object) => Map<string, CourseTool> | undefined;

/**
 * Name → frozen tool. Registration snapshots every definition first; a batch changes the
 * registry only if every member is valid and no name repeats (inside the batch or against
 * what is registered). Reads never expose the internal Map.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, CourseTool>();

  static {
    // The private field is the brand: a Proxy or a fake with the right prototype has none.
    toolsOf = (registry) => (#tools in registry ? (registry as ToolRegistry).#tools : undefined);
  }

  constructor(tools?: Iterable<ToolLike>) {
    if (tools !== undefined) this.registerMany(tools);
  }

  /** Registers one tool; throws ToolContractError and changes nothing if it is invalid or its name is taken. */
  register(tool: ToolLike): void {
    this.registerMany([tool]);
  }

  /** Registers a batch atomically: all of it, or (with a ToolContractError) none of it. */
  registerMany(tools: Iterable<ToolLike>): void {
    // Phase 1: snapshot and check everything; the registry is not touched.
    const batch = snapshotBatch(tools);
    const names = new Map<string, CourseTool>();
    for (let index = 0; index < batch.length; index += 1) {
      const tool = batch[index] as CourseTool;
      if (MapPrototypeHas(names, tool.name)) duplicate(`tool name "${tool.name}" appears twice in the batch`);
      if (MapPrototypeHas(this.#tools, tool.name)) duplicate(`tool name "${tool.name}" is already registered`);
      MapPrototypeSet(names, tool.name, tool);
    }
    // Phase 2: nothing can fail any more.
    for (let index = 0; index < batch.length; index += 1) {
      const tool = batch[index] as CourseTool;
      MapPrototypeSet(this.#tools, tool.name, tool);
    }
  }

  /** The frozen tool registered under `name`, if any. */
  get(name: string): CourseTool | undefined {
    return MapPrototypeGet(this.#tools, name);
  }

  has(name: string): boolean {
    return MapPrototypeHas(this.#tools, name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    const names: string[] = [];
    const next = mapKeyStepper(this.#tools);
    for (let step = next(); step.done !== true; step = next()) names[names.length] = step.value;
    return names;
  }

  get size(): number {
    return MapPrototypeGetSize(this.#tools);
  }

  /** A registry with the same membership and the very same frozen tool objects, independent from now on. */
  snapshot(): ToolRegistry {
    const copy = new ToolRegistry();
    const target = copy.#tools;
    const next = mapEntryStepper(this.#tools);
    for (let step = next(); step.done !== true; step = next()) MapPrototypeSet(target, step.value[0], step.value[1]);
    return copy;
  }
}

/** The registry's internal map, for the executors; a ToolContractError if `registry` is not a ToolRegistry. */
export function registeredTools(registry: unknown): Map<string, CourseTool> {
  const tools = typeof registry === "object" && registry !== null ? toolsOf(registry) : undefined;
  if (tools === undefined) throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, "registry must be a ToolRegistry");
  return tools;
}

/** Phase 1 of registration: every member snapshotted, or a ToolContractError. */
function snapshotBatch(tools: Iterable<ToolLike>): CourseTool[] {
  if (typeof tools !== "object" || tools === null || isProxy(tools)) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, "tools must be an array or another iterable object (not a Proxy)");
  }
  const batch: CourseTool[] = [];
  if (ArrayIsArray(tools)) {
    // By index, not by the (patchable) array iterator; holes and accessors are refused.
    const length = tools.length;
    for (let index = 0; index < length; index += 1) {
      const descriptor = ObjectGetOwnPropertyDescriptor(tools, index);
      if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) {
        throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, `tools[${index}] is a hole or an accessor`);
      }
      batch[index] = defineTool(descriptor.value);
    }
    return batch;
  }
  try {
    for (const tool of tools) batch[batch.length] = defineTool(tool);
  } catch (error) {
    if (isToolContractError(error)) throw error;
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, "iterating the tools threw", { cause: error });
  }
  return batch;
}

function duplicate(message: string): never {
  throw new ToolContractError(COURSE_TOOL_DUPLICATE_TOOL_NAME, message);
}
