import type * as z from 'zod/mini';

/**
 * What an issue says when zod gave it no words of its own ('Invalid input'): a key refused by its own
 * check (a record's key, as a config file's environment names) says that check's words; an empty string
 * or a number out of range says its bound; a choice among literals (a version) names them.
 */
function problemOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_value' && 'values' in issue) return `must be one of ${issue.values.join(', ')}`;
  if (issue.message !== 'Invalid input') return issue.message;
  if (issue.code === 'invalid_type') return `must be ${issue.expected}`;
  if (issue.code === 'invalid_key' && issue.issues.length > 0) return issue.issues.map(problemOf).join(', ');
  if (issue.code === 'too_small' && issue.origin === 'string')
    return Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
  if (issue.code === 'too_small' && issue.origin === 'number')
    return `must be ${issue.inclusive ? 'at least' : 'more than'} ${issue.minimum}`;
  if (issue.code === 'too_big' && issue.origin === 'number')
    return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
  if (issue.code === 'invalid_union') {
    const values = issue.errors.flatMap((errors) =>
      errors.length === 1 && errors[0]?.code === 'invalid_value' ? errors[0].values : [undefined],
    );
    if (values.length > 0 && !values.includes(undefined)) return `must be one of ${values.join(', ')}`;
  }
  return issue.message;
}

/**
 * One clause per problem, each naming the field: `quantity: must be an integer`. `within` is where the
 * value checked stands in a larger one (`[3]`: the fourth item of a list checked item by item); `whole`
 * names the value itself, for a problem with no field (an HTTP body, a file, a line).
 */
export function describeIssues(error: z.core.$ZodError, within: readonly PropertyKey[] = [], whole = 'body') {
  return error.issues
    .map((issue) => {
      const path = [...within, ...issue.path];
      const where = path.length > 0 ? path.map(String).join('.') : whole;
      return `${where}: ${problemOf(issue)}`;
    })
    .join('; ');
}
