// The documents a newcomer reads keep pointing at real things: every relative link in
// README.md and docs/*.md resolves, every test title docs/ quotes (“…” after a link to a test
// file) is in that file, every TypeScript block in README.md is, verbatim, part of a consumer
// file that pack.test.ts compiles and runs against the installed tarball, and the README's
// layout names every folder of the tree (and nothing that is not there).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const CONSUMERS = join(ROOT, "test/package/consumers");

const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** Relative link targets of a Markdown file, as [target, where it points] pairs. */
function relativeLinks(doc: string): { target: string; path: string; at: number }[] {
  const text = read(doc);
  const links: { target: string; path: string; at: number }[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] as string;
    if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue;
    const file = target.split("#")[0] as string;
    links.push({ target, path: resolve(dirname(join(ROOT, doc)), file), at: match.index ?? 0 });
  }
  return links;
}

/** Every file below `dir`, as text. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesBelow(join(dir, entry.name)) : [readFileSync(join(dir, entry.name), "utf8")],
  );
}

describe("the documents (README.md, docs/)", () => {
  test.each(DOCS)("every relative link in %s resolves to a file in the repository", (doc) => {
    const broken = relativeLinks(doc)
      .filter(({ path }) => relative(ROOT, path).startsWith("..") || !existsSync(path))
      .map(({ target }) => target);
    expect(broken).toEqual([]);
  });

  test.each(DOCS)("every test title %s quotes is in the test file it is listed under", (doc) => {
    const missing: string[] = [];
    for (const line of read(doc).split("\n")) {
      const links = [...line.matchAll(/\]\(([^)\s]+\.test\.ts)\)/g)];
      links.forEach((link, index) => {
        const file = resolve(dirname(join(ROOT, doc)), link[1] as string);
        if (!existsSync(file)) return; // reported by the link check
        const source = readFileSync(file, "utf8");
        const end = index + 1 < links.length ? (links[index + 1]?.index ?? line.length) : line.length;
        const quoted = line.slice((link.index ?? 0) + link[0].length, end);
        for (const title of quoted.matchAll(/“([^”]+)”/g)) {
          if (!source.includes(title[1] as string)) missing.push(`${relative(ROOT, file)}: ${title[1]}`);
        }
      });
    }
    expect(missing).toEqual([]);
  });

  test("docs/contract.md quotes test titles (so the check above has something to check)", () => {
    expect(read("docs/contract.md").match(/“[^”]+”/g)?.length ?? 0).toBeGreaterThan(50);
  });

  test("every TypeScript example in README.md is part of a consumer file that is compiled and run", () => {
    const blocks = [...read("README.md").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] as string);
    expect(blocks.length).toBeGreaterThan(0);
    const consumers = filesBelow(CONSUMERS);
    const orphans = blocks.filter((block) => !consumers.some((source) => source.includes(block)));
    expect(orphans).toEqual([]);
  });

  test("the README's layout names every top-level folder and every wing of src/, and only real paths", () => {
    const readme = read("README.md");
    const start = readme.indexOf("## Layout");
    const block = /```\n([\s\S]*?)```/.exec(readme.slice(start))?.[1] ?? "";
    const named: string[] = [];
    let parent = "";
    for (const line of block.split("\n")) {
      const entry = /^( *)(\S+)/.exec(line);
      if (entry === null || !/\/$|\.ts$/.test(entry[2] as string)) continue; // a continuation line
      const path = (entry[1] as string).length === 0 ? (entry[2] as string) : `${parent}${entry[2]}`;
      if ((entry[1] as string).length === 0) parent = path;
      named.push(path);
    }
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
    const folders = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && !["node_modules", "dist", "coverage"].includes(entry.name))
        .map((entry) => `${dir}${entry.name}/`);
    const expected = [...folders(""), ...folders("src/")];
    expect(expected.filter((path) => !named.includes(path))).toEqual([]);
  });
});
