export { buildNameTable, newNameTableGenerator, type NameInfo } from './name-table-generator.js';
