// typed-tool-names.test.ts under TypeScript 7 (the native compiler, test/package/typescript-7/):
// the same file type-checks, its every @ts-expect-error meeting the error it expects (an unused
// one is an error too), so the names are kept, and misspellings caught, by both compilers.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** npm links the file: dependency `typescript-7-check` to test/package/typescript-7, where TypeScript 7 is installed. */
const TSC7 = `${ROOT}node_modules/typescript-7-check/node_modules/typescript`;
const PROJECT = fileURLToPath(new URL("./tsconfig.typescript-7.json", import.meta.url));

test("TypeScript 7 type-checks typed-tool-names.test.ts (against the build's declarations)", async () => {
  const version = (JSON.parse(readFileSync(`${TSC7}/package.json`, "utf8")) as { version: string }).version;
  expect(version).toMatch(/^7\./);
  const checked = await run(process.execPath, [`${TSC7}/bin/tsc`, "-p", PROJECT], { cwd: ROOT, timeout: 120_000 }).then(
    () => "no errors",
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  expect(checked).toBe("no errors");
}, 130_000);
