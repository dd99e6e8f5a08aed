// The "versus" case's bare Piscina worker: what a user's own framework tool hands to
// `piscina.run` when it wants the call off the main thread (the same `pong` as toolgate's tool).
import { pong } from "../versus-tools.js";

export default function run(input: { readonly n: number }): { pong: number } {
  return pong(input);
}
