// The tsconfig.json of a project that compiles the consumers (test/package/consumers/) against
// the installed tarball: a user's strict project. Written by test/package/pack.test.ts and by
// each project of test/package/peer-matrix.test.ts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes `dir`/tsconfig.json: consumers/ compiled to out/. */
export function writeConsumerTsconfig(dir: string): void {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2024"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true, // comlink's own .d.ts needs the DOM lib; toolgate's are checked through their use
        rootDir: "consumers",
        outDir: "out",
      },
      include: ["consumers"],
    }),
  );
}
