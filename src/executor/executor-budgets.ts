// Each executor's resolved argument budgets, kept where an adapter can find them by the
// executor object: the Pi adapter checks a call's arguments before Pi's own validator runs,
// and must refuse what the executor would refuse (issue 28, defect 7). A WeakMap, so the
// record never keeps an executor alive and nothing is added to the executor's public shape.
// docs/adapters.md — Use it with Pi.
import { DEFAULT_ARGUMENT_BUDGETS, type ResolvedArgumentBudgets } from "../contract/budgets.js";
import { WeakMapPrototypeGet, WeakMapPrototypeSet } from "../contract/primordials.js";

const argumentBudgetsByExecutor = new WeakMap<object, ResolvedArgumentBudgets>();

/** Records `executor`'s argument budgets (its constructor calls this once). */
export function recordArgumentBudgets(executor: object, budgets: ResolvedArgumentBudgets): void {
  WeakMapPrototypeSet(argumentBudgetsByExecutor, executor, budgets);
}

/** The argument budgets `source` applies to a call: an executor's own, or the defaults (a registry, a wrapper of the user's). */
export function argumentBudgetsOf(source: unknown): ResolvedArgumentBudgets {
  if (typeof source !== "object" || source === null) return DEFAULT_ARGUMENT_BUDGETS;
  return WeakMapPrototypeGet(argumentBudgetsByExecutor, source) ?? DEFAULT_ARGUMENT_BUDGETS;
}
