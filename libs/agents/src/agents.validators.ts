import { registerDecorator, ValidateIf, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { validateToolset } from '@app/toolset';

/** A toolset checked by the pure grammar of libs/toolset (every violation, its own messages). */
export function IsToolset(options: { required?: boolean } = {}, validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isToolset',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validation,
      constraints: [options.required ?? false],
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          validateToolset(value, { field: args.property, required: args.constraints[0] as boolean }).length === 0,
        defaultMessage: () => 'toolset is invalid',
      },
    });
  };
}

/** An object whose values are all strings (labels, annotations). */
export function IsStringMap(validation?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isStringMap',
      target: target.constructor,
      propertyName: propertyName as string,
      options: validation,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string'),
        defaultMessage: (args?: ValidationArguments) => `${args?.property} must be an object whose values are strings, e.g. {"team": "sre"}`,
      },
    });
  };
}

/** Optional but never null: an absent field keeps its value, a null one is refused. */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
