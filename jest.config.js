/** Jest runs the TypeScript sources directly through @swc/jest as ES modules. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      },
    ],
  },
  setupFiles: ['reflect-metadata'],
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  testTimeout: 30000,
  // Most suites wait on sockets and child processes: one worker per core, not Jest's cores − 1.
  maxWorkers: '100%',
  // A worker keeps what every suite it ran left behind, and its collector then costs more with each
  // suite: replaced once its heap passes this, the whole run takes a fifth less time and CPU
  // (bench/README.md, "The test run").
  workerIdleMemoryLimit: '350MB',
  reporters: ['default', '<rootDir>/testing/summary-reporter.js'],
};
