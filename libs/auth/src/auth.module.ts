import { Injectable, Logger, Module, type DynamicModule, type InjectionToken, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { loadApiTokensFile, loadPolicyFile } from './auth-files.js';
import { Authenticator } from './authenticator.js';
import { Authorizer } from './authorizer.js';
import { PrincipalTokenVerifier } from './mcp-token-verifier.js';
import { OidcVerifier } from './oidc-verifier.js';

/** Every operation the service serves (MCP tool names plus the REST-only ones): what a policy may name. */
export const AUTH_OPERATIONS = Symbol('AUTH_OPERATIONS');

export interface AuthModuleAsyncOptions {
  inject?: InjectionToken[];
  useFactory: (...deps: never[]) => readonly string[] | Promise<readonly string[]>;
}

function authenticator(config: AppConfig): Authenticator {
  const oidc = config.OIDC_ISSUER_URL
    ? new OidcVerifier({
        issuer: config.OIDC_ISSUER_URL,
        audience: config.OIDC_AUDIENCE!,
        usernameClaim: config.OIDC_USERNAME_CLAIM,
        groupsClaim: config.OIDC_GROUPS_CLAIM,
      })
    : undefined;
  const tokens = config.API_TOKENS_FILE ? loadApiTokensFile(config.API_TOKENS_FILE) : undefined;
  return new Authenticator({ oidc, tokens });
}

function authorizer(config: AppConfig, operations: readonly string[]): Authorizer {
  if (config.AUTHZ_POLICY_FILE) return Authorizer.fromPolicy(loadPolicyFile(config.AUTHZ_POLICY_FILE, operations));
  return config.authEnabled ? Authorizer.denyAll(operations) : Authorizer.allowAll(operations);
}

/** Says at start how callers are authenticated and authorized; fetches the OIDC discovery early. */
@Injectable()
class AuthStartup implements OnApplicationBootstrap {
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly config: AppConfig,
    private readonly authenticator: Authenticator,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const c = this.config;
    if (!c.authEnabled) {
      const why = c.AUTH_DISABLED ? 'AUTH_DISABLED=true' : `HOST ${c.HOST} is loopback`;
      this.logger.warn(`authentication is OFF (${why}): every caller is anonymous${c.AUTHZ_POLICY_FILE ? '' : ' and admin'}; set OIDC_ISSUER_URL or API_TOKENS_FILE to turn it on`);
    } else {
      const ways = [c.OIDC_ISSUER_URL && `OIDC tokens from ${c.OIDC_ISSUER_URL} (aud ${c.OIDC_AUDIENCE})`, c.API_TOKENS_FILE && `API tokens of ${c.API_TOKENS_FILE}`];
      this.logger.log(`authentication is on: ${ways.filter(Boolean).join(', ')}`);
    }
    this.logger.log(c.AUTHZ_POLICY_FILE ? `authorization: policy ${c.AUTHZ_POLICY_FILE}` : c.authEnabled ? 'authorization: no AUTHZ_POLICY_FILE, nothing is granted' : 'authorization: none (everyone is admin)');
    const oidc = this.authenticator.oidc;
    if (oidc) await oidc.metadata().catch((error: Error) => this.logger.warn(`${error.message} (tokens are refused until it is)`));
  }
}

/**
 * Authentication and authorization for both doors: Authenticator (Authorization header →
 * principal), Authorizer (the policy), PrincipalTokenVerifier (for the bearer check of
 * /mcp). The token and policy files are read and validated when the module starts.
 */
@Module({})
export class AuthModule {
  static forRoot(options: { operations: readonly string[] }): DynamicModule {
    return AuthModule.forRootAsync({ useFactory: () => options.operations });
  }

  static forRootAsync(options: AuthModuleAsyncOptions): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [
        { provide: AUTH_OPERATIONS, inject: options.inject ?? [], useFactory: options.useFactory },
        { provide: Authenticator, inject: [AppConfig], useFactory: authenticator },
        { provide: Authorizer, inject: [AppConfig, AUTH_OPERATIONS], useFactory: authorizer },
        { provide: PrincipalTokenVerifier, inject: [Authenticator], useFactory: (a: Authenticator) => new PrincipalTokenVerifier(a) },
        AuthStartup,
      ],
      exports: [Authenticator, Authorizer, PrincipalTokenVerifier, AUTH_OPERATIONS],
    };
  }
}
