// Point-to-point comlink endpoints multiplexed over one BroadcastChannel. A pool has one
// channel for the executor's lifetime, so the no-abort path costs nothing per call (no
// MessageChannel per task), and every channel is unref'd so it never keeps a process or a
// worker alive.
import { BroadcastChannel } from "node:worker_threads";
import type { Endpoint } from "comlink";

interface Envelope {
  readonly to: string;
  readonly message: unknown;
}

type MessageListener = ((event: { data: unknown }) => void) | { handleEvent(event: { data: unknown }): void };

/** A comlink Endpoint that talks to `peer` and hears only what is addressed to `self`. */
export interface AddressedEndpoint {
  /** The endpoint as comlink's `expose`/`wrap` take it. */
  readonly endpoint: Endpoint;
  /** Stops listening on the shared channel (the channel itself stays open). */
  detach(): void;
}

export function addressedEndpoint(channel: BroadcastChannel, self: string, peer: string): AddressedEndpoint {
  const listeners = new Set<MessageListener>();
  const onChannelMessage = (event: Event): void => {
    const envelope = (event as Event & { data: unknown }).data as Envelope | null;
    if (envelope === null || typeof envelope !== "object" || envelope.to !== self) return;
    const delivered = { data: envelope.message };
    for (const listener of listeners) {
      if (typeof listener === "function") listener(delivered);
      else listener.handleEvent(delivered);
    }
  };
  channel.addEventListener("message", onChannelMessage);
  const endpoint = {
    postMessage(message: unknown): void {
      try {
        channel.postMessage({ to: peer, message } satisfies Envelope);
      } catch {
        // The channel is closed (the executor shut down); comlink may still try to send a
        // proxy release from a finalizer, which must not become an uncaught exception.
      }
    },
    addEventListener(_type: string, listener: MessageListener): void {
      listeners.add(listener);
    },
    removeEventListener(_type: string, listener: MessageListener): void {
      listeners.delete(listener);
    },
  };
  return {
    endpoint: endpoint as unknown as Endpoint,
    detach(): void {
      listeners.clear();
      channel.removeEventListener("message", onChannelMessage);
    },
  };
}

/** A BroadcastChannel that never keeps its thread alive. */
export function openControlChannel(name: string): BroadcastChannel {
  const channel = new BroadcastChannel(name);
  (channel as BroadcastChannel & { unref(): void }).unref();
  return channel;
}
