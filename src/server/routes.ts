import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './errors';

/** serve's routes, one table for the router, `Allow` and the OpenAPI test; a wrong method without a key is 401. */

/** The methods a route declares; HEAD is answered wherever GET is, by GET's handler (node:http drops the body). */
export type RouteMethod = 'GET' | 'PATCH';

/** What answers a method of a route: the app supplies one handler each, the OpenAPI document one operation each. */
export type OperationId =
  | 'health'
  | 'describeServer'
  | 'listInventory'
  | 'updateInventory'
  | 'getPet'
  | 'listOrders';

export interface Route {
  /** The path; a last segment `{name}` matches any one non-empty segment, handed to the handler as it is. */
  readonly pattern: string;
  /** A valid key is required before anything else is looked at, the method included. */
  readonly auth: boolean;
  readonly methods: Readonly<Partial<Record<RouteMethod, OperationId>>>;
  /** Whether --fail-rate and --rate-limit apply: health checks and the tools reading the description are spared. */
  readonly faults: boolean;
  /** Part of the inventory interface, under API_PREFIX, and so in the served OpenAPI document. */
  readonly described: boolean;
}

export const API_PREFIX = '/v1';

export const ROUTES = [
  { pattern: '/healthz', auth: false, methods: { GET: 'health' }, faults: false, described: false },
  {
    pattern: '/v1/openapi.json',
    auth: false,
    methods: { GET: 'describeServer' },
    faults: false,
    described: false,
  },
  { pattern: '/v1/inventory', auth: true, methods: { GET: 'listInventory' }, faults: true, described: true },
  {
    pattern: '/v1/inventory/{petId}',
    auth: true,
    methods: { PATCH: 'updateInventory' },
    faults: true,
    described: true,
  },
  { pattern: '/v1/pets/{petId}', auth: true, methods: { GET: 'getPet' }, faults: true, described: true },
  { pattern: '/v1/store/orders', auth: true, methods: { GET: 'listOrders' }, faults: true, described: true },
] as const satisfies readonly Route[];

/** The methods a route answers, in `Allow` order: HEAD right after GET. */
function allowedMethods(route: Route): string[] {
  return Object.keys(route.methods).flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

export function methodNotAllowed(route: Route): HttpError {
  const allow = allowedMethods(route).join(', ');
  return new HttpError('method_not_allowed', `this route allows ${allow}`, { Allow: allow });
}

/** Every method some route answers: what `Allow` says where no route applies (CONNECT). */
export const SERVER_METHODS = [...new Set(ROUTES.flatMap(allowedMethods))].join(', ');

/** `param` is the request's `{name}` segment as sent, or '' for a route without one. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, param: string) => void | Promise<void>;

/** A route as the router holds it: the path up to its `{name}` segment (all of it without one). */
function compile(route: Route, handlers: Record<OperationId, RouteHandler>) {
  const brace = route.pattern.indexOf('{');
  if (brace !== -1 && !/^\{\w+\}$/.test(route.pattern.slice(brace)))
    throw new Error(`route ${route.pattern}: only a last segment may be a parameter`);
  const byMethod = new Map<string, RouteHandler>();
  for (const [method, operation] of Object.entries(route.methods)) {
    byMethod.set(method, handlers[operation]);
    if (method === 'GET') byMethod.set('HEAD', handlers[operation]);
  }
  const parameterised = brace !== -1;
  return {
    route,
    prefix: parameterised ? route.pattern.slice(0, brace) : route.pattern,
    parameterised,
    byMethod,
  };
}

/** The router over ROUTES: a map lookup for fixed paths (the GET hot path), a prefix test for the others. */
export function createRouter(
  handlers: Record<OperationId, RouteHandler>,
  authenticate: (req: IncomingMessage) => void,
) {
  const fixed = new Map<string, ReturnType<typeof compile>>();
  const parameterised: ReturnType<typeof compile>[] = [];
  for (const route of ROUTES) {
    const compiled = compile(route, handlers);
    if (compiled.parameterised) parameterised.push(compiled);
    else fixed.set(route.pattern, compiled);
  }

  /** The route a path belongs to, whatever the method; undefined when none does. */
  const match = (path: string) =>
    fixed.get(path) ??
    parameterised.find(
      ({ prefix }) =>
        path.length > prefix.length && path.startsWith(prefix) && path.indexOf('/', prefix.length) === -1,
    );
  /** Authenticates where the route wants it, then answers with the method's handler; throws 401, 405 or 404. */
  function dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    matched: ReturnType<typeof match>,
  ) {
    const method = req.method ?? 'GET';
    if (!matched) throw new HttpError('not_found', `no route ${method} ${path}`);
    if (matched.route.auth) authenticate(req);
    const handler = matched.byMethod.get(method);
    if (!handler) throw methodNotAllowed(matched.route);
    return handler(req, res, matched.parameterised ? path.slice(matched.prefix.length) : '');
  }
  return { match, dispatch };
}
