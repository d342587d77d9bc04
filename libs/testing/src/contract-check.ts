import express, { type Express } from 'express';
import { type ApiRoute, ROUTING_ERRORS, errorBodySchema, routeOf } from '@analytics/schema';

export interface ContractCheck {
  /** The app to send requests to: `app`, with every JSON answer of a known route parsed by that route's schema. */
  app: Express;
  /** Answers that did not parse (or answered a status or error code the route does not declare). */
  violations: string[];
  /** How many answers were checked, per `METHOD /path status`. */
  checked: Map<string, number>;
}

/** How `checked` names a route's answers with a status: `POST /v1/track 202`. */
export const answerOf = (route: ApiRoute, status: number): string => `${route.method.toUpperCase()} ${route.path} ${status}`;

/**
 * Wraps an app so that each JSON answer of a route in libs/schema's API_ROUTES is parsed with the route's response
 * schema for its status (errors: the envelope, with a code the route declares). A suite asserts no violations at its end.
 */
export function contractChecked(app: Express): ContractCheck {
  const violations: string[] = [];
  const checked = new Map<string, number>();
  const outer = express();
  outer.disable('x-powered-by');
  outer.use((req, res, next) => {
    const path = req.originalUrl.split('?')[0]!;
    const route = routeOf(req.method, path);
    if (!route) return next();
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const status = res.statusCode;
      const where = answerOf(route, status);
      checked.set(where, (checked.get(where) ?? 0) + 1);
      const schema = status < 400 ? route.responses[status] : (route.errorBody ?? errorBodySchema);
      if (!schema) violations.push(`${where}: status not declared by the route`);
      else {
        const parsed = schema.safeParse(body);
        if (!parsed.success) violations.push(`${where}: ${parsed.error.message}`);
        const code = (body as { error?: string })?.error;
        if (status >= 400 && !route.errorBody && code && ![...route.errors, ...ROUTING_ERRORS].includes(code as never)) violations.push(`${where}: error ${code} not declared by the route`);
      }
      return json(body);
    };
    next();
  });
  outer.use(app);
  return { app: outer, violations, checked };
}
