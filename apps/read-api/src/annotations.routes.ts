import type { Annotations } from '@analytics/auth';
import { ApiError, keyCreator, routes } from '@analytics/schema';
import { type RouteDefinition, defineRoute } from '@analytics/service-kit';

/**
 * POST /v1/annotations and DELETE /v1/annotations/{annotation_id} (issue 48, docs/alerts-and-reports.md): the
 * project's sk_ (or ak_) key adds a dated note, a deploy marker from CI, and deletes the ones it made; another key's
 * (or a member's) is 404 not_found, as one of another project. read-api serves them beside GET /v1/annotations: the
 * proxy sends a path to one app. The key guard refuses pk_ and rk_ keys and share links with 403 insufficient_scope.
 */
export function annotationWriteRoutes(annotations: Annotations): RouteDefinition[] {
  return [
    defineRoute(routes.createAnnotation, async ({ body }, auth) => {
      const annotation = await annotations.create(auth.projectId, { at: body.at, text: body.text, kind: body.kind, created_by: keyCreator(auth.prefix) });
      // The key's project was deleted after the key resolved.
      if (!annotation) throw new ApiError('invalid_api_key');
      return { annotation };
    }),
    defineRoute(routes.deleteAnnotation, async ({ params }, auth) => {
      if (!(await annotations.delete(auth.projectId, params.annotation_id, keyCreator(auth.prefix)))) throw new ApiError('not_found');
    }),
  ];
}
