// A toolgate call's progress as MCP `notifications/progress` for the request that asked for
// it with `_meta.progressToken`.
// docs/adapters.md — MCP (`_meta.progressToken`).
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ProgressToken, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { PromisePrototypeThen } from "../contract/primordials.js";
import type { ProgressListener } from "../executor/progress.js";

/** What the SDK hands a server's request handler besides the request. */
export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const ignore = (): void => {};

/**
 * The `onProgress` of one tools/call: each report (already throttled and bounded by the
 * executor) is sent as `notifications/progress` with the request's token, through the
 * handler's own `sendNotification` (which sends nothing once the request is cancelled). MCP
 * says progress MUST increase with each notification: a report whose `progress` is not above
 * the last one sent is dropped. A failed send (the connection closed) is ignored: the call's
 * own outcome reports that.
 */
export function mcpProgressListener(progressToken: ProgressToken, extra: McpRequestExtra): ProgressListener {
  let last = Number.NEGATIVE_INFINITY;
  return ({ progress, total, message }) => {
    if (!(progress > last)) return;
    last = progress;
    const notification: ServerNotification = {
      method: "notifications/progress",
      params: {
        progressToken,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      },
    };
    void PromisePrototypeThen(extra.sendNotification(notification), undefined, ignore);
  };
}
