// meshctl's commands, behind the command trees of cli/: what each one does, with its output.
export { validateFiles, type ValidateOutput } from './validate/validate-files.js';
