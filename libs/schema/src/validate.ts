import { z } from 'zod';
import { ApiError, type ErrorCode } from './errors';

/** The flattened validation tree the spec puts in `details`, plus each issue's path for nested fields. */
export function validationDetails(error: z.ZodError) {
  const flat = z.flattenError(error);
  return {
    formErrors: flat.formErrors,
    fieldErrors: flat.fieldErrors,
    issues: error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  };
}

/** Parses `input` or throws `ApiError(code)` with the validation details. */
export function parseOrThrow<S extends z.ZodTypeAny>(schema: S, input: unknown, code: ErrorCode = 'invalid_payload'): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ApiError(code, { details: validationDetails(result.error) });
  return result.data;
}
