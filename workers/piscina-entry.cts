// The file Piscina loads in each thread. Piscina require()s its entry first, and on Node ≥ 20.19
// require() loads an ES module synchronously: a thread terminated while that module graph is
// being linked aborts the whole process (a Node fatal error, "IsGraphAsync must be used on an
// instantiated module"). Threads are terminated while they boot (close(), a replaced thread),
// so the entry Piscina sees is CommonJS, and it imports the real entry the asynchronous way.
// docs/contract.md: rule W5 — faults are results (a thread terminated while it boots kills only that thread).
export = import("./tool-worker.js").then((entry) => entry.default);
