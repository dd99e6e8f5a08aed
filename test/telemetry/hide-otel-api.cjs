// Preloaded (node --require) by without-otel-api.test.ts: this process has no
// @opentelemetry/api, as an application that never installed it (every require of it fails
// as a missing package does, whatever node_modules holds).
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveWithoutOtel(request, ...rest) {
  if (request === "@opentelemetry/api" || request.startsWith("@opentelemetry/api/")) {
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
  }
  return Reflect.apply(resolve, this, [request, ...rest]);
};
