// Operator endpoints are guarded by the ADMIN_TOKEN bearer token, with wrong tokens
// limited per client address (api/services/access/operator-auth.ts).
import type { Access } from '../../services/access/access.ts';
import { operatorTokenGuard } from '../../services/access/operator-auth.ts';

export function adminGuard(access: Access, adminToken: string) {
  return operatorTokenGuard(access, [adminToken], {
    missing: 'Admin token required: send it as "Authorization: Bearer <ADMIN_TOKEN>"',
    invalid: 'Invalid admin token',
  });
}
