// How messages name a value they refuse: "undefined", "null", "a string", "an array".
// One helper, so no message reads "is a undefined" or "got object". Reads nothing of the value
// but its type (no getters, traps or toString), so it is safe on anything.
// docs/operations.md — Names (messages that name a value they refuse).
import { ArrayIsArray, isProxy } from "./primordials.js";

/**
 * The value's kind with its article: `undefined`, `null`, `a Proxy`, `an array`, `an object`,
 * `a function`, `a string`, `a boolean`, `a bigint`, `a symbol`, or `the number 1.5`
 * (a number is named by its value: "got the number 0" says more than "got a number").
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "number":
      return `the number ${String(value)}`;
    case "object":
      if (value === null) return "null";
      if (isProxy(value)) return "a Proxy";
      return ArrayIsArray(value) ? "an array" : "an object";
    case "function":
      return isProxy(value) ? "a Proxy" : "a function";
    default:
      return `a ${typeof value}`; // string, boolean, bigint, symbol: all take "a"
  }
}
