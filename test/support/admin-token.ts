// The operator token every test service starts with (its own module: both the service
// starters and the key helpers need it, and neither may import the other in a cycle).
export const ADMIN_TOKEN = 'test-admin-token-0123456789';
