// Run after every suite file (jest.config.mjs, setupFilesAfterEnv): what a suite's copy of the
// service's modules left enabled in the jest worker, which outlives it, is turned off.
import { afterAll } from '@jest/globals';
import { OperationContexts } from '../../libs/common/src/operation-context.js';

afterAll(() => {
  OperationContexts.disable();
});
