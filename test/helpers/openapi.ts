import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, walked by path
export type OpenApiDocument = any;

// Compiling is what costs, not checking: the OpenAPI 3.1 meta-schema takes about 0.2 s of CPU. So one
// validator for the whole run (it keeps what it compiled), and without ajv's pass that optimises the code it
// generates: that pass made compiling 1.7 to 2 times slower, for little on the few hundred values checked.
const documentValidator = new Validator({ code: { optimize: false } });

/** Whether `document` is a valid OpenAPI document, with ajv's errors when it is not. */
export function validateDocument(document: OpenApiDocument) {
  return documentValidator.validate(document);
}

const checkersByComponents = new Map<string, (schema: unknown) => ValidateFunction>();
const checkersByDocument = new WeakMap<OpenApiDocument, (schema: unknown) => ValidateFunction>();

/**
 * The validator of one of `document`'s schemas (one that may `$ref` its components), compiled once per run:
 * documents with the same components share one ajv.
 */
export function schemaChecker(document: OpenApiDocument): (schema: unknown) => ValidateFunction {
  const known = checkersByDocument.get(document);
  if (known) return known;
  const components = JSON.stringify(document.components);
  let checker = checkersByComponents.get(components);
  if (!checker) {
    const ajv = new Ajv2020({ strict: false, code: { optimize: false } });
    ajv.addFormat('int64', { type: 'number', validate: Number.isInteger });
    ajv.addSchema({ $id: 'doc', components: JSON.parse(components) });
    const compiled = new Map<string, ValidateFunction>();
    checker = (schema) => {
      const text = JSON.stringify(schema).replaceAll('"#/components', '"doc#/components');
      let validate = compiled.get(text);
      if (!validate) {
        validate = ajv.compile(JSON.parse(text));
        compiled.set(text, validate);
      }
      return validate;
    };
    checkersByComponents.set(components, checker);
  }
  checkersByDocument.set(document, checker);
  return checker;
}
