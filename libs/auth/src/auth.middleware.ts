import type { Request } from 'express';
import type { RouteGuards } from '@analytics/service-kit';
import type { Authenticator } from './authenticator';

/** The `apiKey` guard of a router (service-kit's defineRoute): the bearer key checked for the route's declared access. */
export function keyGuard(auth: Authenticator): NonNullable<RouteGuards['apiKey']> {
  return (req, _res, route) => {
    if (!route.access) throw new Error('a route without a declared access authorizes its calls itself: give its router its own apiKey guard');
    return auth.authenticate(req.get('authorization'), route.access, req.get('origin'), route.share === true);
  };
}

/** The app's FailedAuthBudget `budgetKeyOf`: the presented key's prefix when it exists (its failures are charged to it, not to the IP). */
export const failedAuthKeyOf = (auth: Authenticator) => (req: Request) => auth.knownPrefix(req.get('authorization'));
