// Operator endpoints are guarded by the ADMIN_TOKEN bearer token.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../core/errors.ts';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function adminGuard(adminToken: string) {
  const expected = digest(adminToken);
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = req.headers.authorization;
    if (!header) throw new AppError(Errors.unauthorized, 'Admin token required: send it as "Authorization: Bearer <ADMIN_TOKEN>"');
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
      throw new AppError(Errors.forbidden, 'Invalid admin token');
    }
  };
}
