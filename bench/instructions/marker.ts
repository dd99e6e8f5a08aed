// The marker the counted calls sit between: `os.getPriority()` enters libuv's
// `uv_os_getpriority`, a native function that nothing else in these processes calls, and the
// driver has callgrind dump its counts whenever it is entered (`--dump-before`). The driver
// checks that each process dumped there exactly four times (bench/instructions/subject.ts).
import { getPriority } from "node:os";

export const MARKER_FUNCTION = "uv_os_getpriority";

export const marker = (): void => {
  getPriority();
};
