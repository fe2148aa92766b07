import type * as z from 'zod/mini';

/**
 * One clause per problem, each naming the field: `quantity: must be an integer`. `within` is where the
 * value checked stands in a larger one (`[3]`: the fourth item of a list checked item by item); `whole`
 * names the value itself, for a problem with no field (an HTTP body, a file, a line).
 */
export function describeIssues(
  error: z.core.$ZodError,
  within: readonly PropertyKey[] = [],
  whole = 'body',
): string {
  return error.issues
    .map((issue) => {
      const path = [...within, ...issue.path];
      const where = path.length > 0 ? path.map(String).join('.') : whole;
      if (issue.code === 'unrecognized_keys')
        return `${where}: unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      if (issue.code === 'invalid_value' && 'values' in issue)
        return `${where}: must be one of ${issue.values.join(', ')}`;
      if (issue.code === 'invalid_type' && issue.message === 'Invalid input')
        return `${where}: must be ${issue.expected}`;
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}
