/**
 * The `@nestjs/swagger` decorators the code uses, deferred: loading `@nestjs/swagger` (with its
 * es-toolkit) is about 530 modules and 250-350 ms of CPU, and only the OpenAPI document, Swagger
 * UI (/docs) and the MCP tools' JSON Schemas read what its decorators write. These same-named decorators only
 * record where they were applied; `applyOpenApiDecorators()` loads `@nestjs/swagger` and replays
 * the recorded applications in the order they ran (TypeScript applies a member's decorators
 * bottom-up, members in declaration order, then the class's), so the metadata is exactly what the
 * eager decorators write. Whatever reads swagger metadata awaits it first. After it, these
 * decorators apply at once.
 */
// As @nestjs/swagger did when its decorators were imported: TypeScript records a property's design:type,
// which the replayed @ApiProperty reads, only where Reflect.metadata exists when the class is defined.
import 'reflect-metadata';
import type * as Swagger from '@nestjs/swagger';

type SwaggerModule = typeof Swagger;
type Decorator = (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => void;

const recorded: Array<(swagger: SwaggerModule) => void> = [];
let loaded: SwaggerModule | undefined;
let applying: Promise<SwaggerModule> | undefined;

/** Applies `decorate` once `@nestjs/swagger` is loaded, at once if it is. */
function whenLoaded(decorate: (swagger: SwaggerModule) => void): void {
  if (loaded) decorate(loaded);
  else recorded.push(decorate);
}

/** A swagger decorator factory of the same name and signature whose decorators are recorded until the replay. */
function deferred<Name extends keyof SwaggerModule>(name: Name): SwaggerModule[Name] {
  const factory = (...args: unknown[]): Decorator => {
    return (target, key, descriptor) => {
      whenLoaded((swagger) => (swagger[name] as (...a: unknown[]) => Decorator)(...args)(target, key, descriptor));
    };
  };
  return factory as SwaggerModule[Name];
}

export const ApiBody = deferred('ApiBody');
export const ApiConsumes = deferred('ApiConsumes');
export const ApiExcludeController = deferred('ApiExcludeController');
export const ApiExtraModels = deferred('ApiExtraModels');
export const ApiHeader = deferred('ApiHeader');
export const ApiOperation = deferred('ApiOperation');
export const ApiParam = deferred('ApiParam');
export const ApiProperty = deferred('ApiProperty');
export const ApiPropertyOptional = deferred('ApiPropertyOptional');
export const ApiQuery = deferred('ApiQuery');
export const ApiResponse = deferred('ApiResponse');
export const ApiTags = deferred('ApiTags');

/**
 * A method decorator applied in the replay, in its place among the recorded ones, for a decorator
 * made from swagger metadata that decorators applied before it write (e.g. query parameters read
 * from a query DTO's @ApiProperty).
 */
export function OnOpenApiReplay(decorate: MethodDecorator): MethodDecorator {
  return (target, key, descriptor) => whenLoaded(() => decorate(target, key, descriptor));
}

/** Loads `@nestjs/swagger` and applies every recorded decorator, in order; once (later calls answer the same). */
export function applyOpenApiDecorators(): Promise<SwaggerModule> {
  applying ??= import('@nestjs/swagger').then((swagger) => {
    loaded = swagger;
    for (const decorate of recorded) decorate(swagger);
    recorded.length = 0;
    return swagger;
  });
  return applying;
}
