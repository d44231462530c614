import { readFileSync } from 'node:fs';
import { ApiTokens, ApiTokensFileError, parseApiTokens } from './api-tokens.js';
import { parsePolicy, PolicyError, type CompiledPolicy } from './policy.js';

/** Reads and validates API_TOKENS_FILE; a missing file or a bad entry stops the start. */
export function loadApiTokensFile(path: string): ApiTokens {
  return new ApiTokens(parseApiTokens(read(path, (why) => new ApiTokensFileError(path, [why])), path));
}

/** Reads and validates AUTHZ_POLICY_FILE against the operations the service serves. */
export function loadPolicyFile(path: string, operations: readonly string[]): CompiledPolicy {
  return parsePolicy(read(path, (why) => new PolicyError(path, [why])), operations, path);
}

function read(path: string, fail: (why: string) => Error): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw fail(`cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): check the path and that the service may read it`);
  }
}
