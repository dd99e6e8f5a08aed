// tools/text-tools.ts, compiled to tools/text-tools.js
import { createHash } from "node:crypto";
import type { ToolDefinition } from "toolgate";

export default [
  {
    name: "sha256",
    description: "Hashes a text.",
    validate: (args) =>
      typeof (args as { text?: unknown }).text === "string"
        ? { ok: true, value: args as { text: string } }
        : { ok: false, error: "text must be a string" },
    execute: ({ text }) => createHash("sha256").update(text).digest("hex"),
  } satisfies ToolDefinition<{ text: string }, string>,
];
