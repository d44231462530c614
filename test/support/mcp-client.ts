import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';

/**
 * The SDK's own Ajv validator, compiling a tool's output schema when a result is first checked
 * against it, once per schema per suite. The SDK's client compiles the output schema of every tool
 * at every tools/list (about 60 schemas, listed many times per suite): 5 of the e2e suites' 87
 * CPU-seconds in band, for tools most suites never call. What a result is checked against is the
 * same.
 */
class CompiledOnUse implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator();
  private readonly compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let validator: JsonSchemaValidator<unknown> | undefined;
    return (input) => {
      if (!validator) {
        const key = JSON.stringify(schema);
        validator = this.compiled.get(key) ?? this.ajv.getValidator(schema);
        this.compiled.set(key, validator);
      }
      return validator(input) as ReturnType<JsonSchemaValidator<T>>;
    };
  }
}

const validator = new CompiledOnUse();

/** The MCP SDK's client, as the suites use it (its output schemas compiled on use). */
export function mcpClient(name: string, options: ClientOptions = {}): Client {
  return new Client({ name, version: '1.0.0' }, { jsonSchemaValidator: validator, ...options });
}
