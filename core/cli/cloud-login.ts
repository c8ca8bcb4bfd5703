/** Builds the body of a cloud (iam) login: a signed STS GetCallerIdentity request. */
import { UsageError } from './client.js';

export async function cloudLoginBody(_fields: Record<string, unknown>, _env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  throw new UsageError('login -method=cloud needs the cloud auth method, which is not built into this version yet');
}
