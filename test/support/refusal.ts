// What a synchronous call that should be refused did: a ToolContractError as [code, message], anything else thrown as itself.
import { isToolContractError } from "toolgate";

export function refusalOf(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return isToolContractError(error) ? [error.code, error.message] : error;
  }
  return "accepted";
}
