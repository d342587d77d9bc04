import type { Request, RequestHandler, Response } from 'express';
import type { Access, AuthContext, Authenticator } from './authenticator';

/** Express middleware: authenticates the bearer key for `access` and puts the context on res.locals.auth. */
export function requireKey(auth: Authenticator, access: Access): RequestHandler {
  return async (req, res, next) => {
    res.locals.auth = await auth.authenticate(req.get('authorization'), access, req.get('origin'));
    next();
  };
}

export function authOf(res: Response): AuthContext {
  return res.locals.auth as AuthContext;
}

/** The app's FailedAuthBudget `budgetKeyOf`: the presented key's prefix when it exists (its failures are charged to it, not to the IP). */
export const failedAuthKeyOf = (auth: Authenticator) => (req: Request) => auth.knownPrefix(req.get('authorization'));
