// toolgate/standard-schema: a tool's `validate` from any Standard Schema v1 library (zod,
// valibot, ArkType, …). The reading lives in the contract (schema-first `defineTool`
// uses it too); this entry point is the door for the validate-only form.
// docs/adapters.md — Validators (`validatorFromStandardSchema`); docs/contract.md: rule 6 — validation first.
export {
  ASYNC_SCHEMA_MESSAGE,
  type StandardJsonSchemaConverter,
  type StandardSchemaV1,
  type StandardSchemaV1Issue,
  type StandardSchemaV1Output,
  type StandardSchemaV1Props,
  type StandardSchemaV1Result,
  type StandardSchemaValidate,
  type StandardSchemaValidatorOptions,
  validatorFromStandardSchema,
} from "../contract/standard-schema.js";
