// The instruction counts' place in bench/results.json: the `instructions` section (written by
// `npm run bench:instructions` only) and its `instructions.*` target rows. Merging replaces
// those and keeps everything else, so the file can hold a wall-time run and a count together;
// bench/run.ts keeps them in turn when a wall-time run rewrites the file.
import { summarize, type TargetCheck } from "../harness.js";

export const INSTRUCTIONS_SECTION = "instructions";

const isInstructionsRow = (check: TargetCheck): boolean => check.id.startsWith(`${INSTRUCTIONS_SECTION}.`);

const targetsOf = (value: unknown): TargetCheck[] =>
  typeof value === "object" && value !== null && Array.isArray((value as { targets?: unknown }).targets)
    ? ((value as { targets: TargetCheck[] }).targets as TargetCheck[])
    : [];

/** `previous` (a results file's contents) with `section` as its instructions section and target rows (after every other row). */
export function mergeInstructions(
  previous: Record<string, unknown>,
  section: { readonly targets: TargetCheck[] },
): Record<string, unknown> {
  const targets = [...targetsOf(previous).filter((check) => !isInstructionsRow(check)), ...section.targets];
  return { ...previous, [INSTRUCTIONS_SECTION]: section, targets, summary: summarize(targets) };
}

/** A wall-time run's results with the instructions section and rows of the file it replaces kept (when it had them). */
export function keepInstructions(results: Record<string, unknown>, previous: Record<string, unknown>): Record<string, unknown> {
  const section = previous[INSTRUCTIONS_SECTION];
  if (typeof section !== "object" || section === null) return results;
  const kept = targetsOf(previous).filter(isInstructionsRow);
  const targets = [...targetsOf(results).filter((check) => !isInstructionsRow(check)), ...kept];
  return { ...results, [INSTRUCTIONS_SECTION]: section, targets, summary: summarize(targets) };
}
