/**
 * Which of a program's flags some code reads. Commands are walked at run time (their options
 * exactly as commander holds them); each action's call site, taken from the stack when `.action`
 * is called, is found in the TypeScript sources, and the type of the handler's options parameter
 * says which property each flag lands in. A flag counts as read when some property access or
 * destructuring in the scanned sources resolves to that property's declaration. Options of a
 * command without an action are its descendants' (commander's `optsWithGlobals`): they count as
 * read when a property of that name is read anywhere in the scanned sources (or a call is handed
 * the name as a string).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../testing/run-bin.js';

export interface FlagUse {
  /** The command's path, e.g. `meshctl experimental uninstall`. */
  readonly command: string;
  /** The flag as typed: `--dry-run`. */
  readonly flag: string;
  readonly read: boolean;
}

interface CallSite {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** Builds the programs while recording where each command's `.action` was called. */
export function withActionSites(build: () => Command[]): { programs: Command[]; sites: Map<Command, CallSite> } {
  const sites = new Map<Command, CallSite>();
  const original = Command.prototype.action;
  Command.prototype.action = function (this: Command, handler: Parameters<Command['action']>[0]) {
    const caller = (new Error().stack ?? '').split('\n')[2] ?? '';
    const at = /((?:file:\/\/)?\/[^():]+\.ts):(\d+):(\d+)\)?$/.exec(caller.trim());
    if (at) sites.set(this, { file: (at[1] as string).replace(/^file:\/\//, ''), line: Number(at[2]), column: Number(at[3]) });
    return original.call(this, handler);
  };
  try {
    return { programs: build(), sites };
  } finally {
    Command.prototype.action = original;
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * What the scanned sources read: the declarations of the properties read, the names read (also
 * through index signatures and `getOptionValue('name')`), and where a spread copies a property
 * into another object type (`{ ...flags }` handed on): a property counts as read when its copy is.
 */
interface Reads {
  readonly declarations: Set<ts.Declaration>;
  readonly names: Set<string>;
  readonly copies: Map<ts.Declaration, ts.Declaration[]>;
}

function collectReads(program: ts.Program, files: readonly string[], wanted: ReadonlySet<string>): Reads {
  const checker = program.getTypeChecker();
  const reads: Reads = { declarations: new Set(), names: new Set(), copies: new Map() };
  const declarationsOf = (symbol: ts.Symbol): ts.Declaration[] => checker.getRootSymbols(symbol).flatMap((root) => root.declarations ?? []);
  const record = (symbol: ts.Symbol | undefined): void => {
    if (symbol) for (const declaration of declarationsOf(symbol)) reads.declarations.add(declaration);
  };
  /** `source`'s properties flow into `target`'s of the same names. */
  const recordCopy = (source: ts.Expression, target: ts.Type | undefined): void => {
    if (!target) return;
    for (const property of checker.getTypeAtLocation(source).getProperties()) {
      if (!wanted.has(property.name)) continue;
      const copy = target.getProperty(property.name);
      if (!copy) continue;
      for (const declaration of declarationsOf(property)) reads.copies.set(declaration, [...(reads.copies.get(declaration) ?? []), ...declarationsOf(copy)]);
    }
  };
  /** An options object handed on whole: as an argument, a property's value, or a spread. */
  const handedOn = (node: ts.Node): boolean =>
    (ts.isIdentifier(node) || ts.isPropertyAccessExpression(node)) &&
    (ts.isCallExpression(node.parent) ? node.parent.arguments.includes(node) : ts.isPropertyAssignment(node.parent) && node.parent.initializer === node);
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && wanted.has(node.name.text)) {
      reads.names.add(node.name.text);
      record(checker.getSymbolAtLocation(node.name));
    } else if (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression) && wanted.has(node.argumentExpression.text)) {
      reads.names.add(node.argumentExpression.text);
      record(checker.getSymbolAtLocation(node.argumentExpression));
    } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name;
      if ((ts.isIdentifier(key) || ts.isStringLiteral(key)) && wanted.has(key.text)) {
        reads.names.add(key.text);
        record(checker.getTypeAtLocation(node.parent).getProperty(key.text));
      }
    } else if (ts.isSpreadAssignment(node) && ts.isObjectLiteralExpression(node.parent)) {
      recordCopy(node.expression, checker.getContextualType(node.parent));
    } else if (ts.isShorthandPropertyAssignment(node)) {
      recordCopy(node.name, checker.getContextualType(node.name));
    } else if (handedOn(node)) {
      recordCopy(node as ts.Expression, checker.getContextualType(node as ts.Expression));
    } else if (ts.isCallExpression(node)) {
      // `getOptionValue('name')`, or a helper handed the option's name.
      for (const argument of node.arguments) if (ts.isStringLiteral(argument) && wanted.has(argument.text)) reads.names.add(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source) visit(source);
  }
  return reads;
}

function isRead(reads: Reads, declarations: readonly ts.Declaration[], seen = new Set<ts.Declaration>()): boolean {
  return declarations.some((declaration) => {
    if (seen.has(declaration)) return false;
    seen.add(declaration);
    return reads.declarations.has(declaration) || isRead(reads, reads.copies.get(declaration) ?? [], seen);
  });
}

function findActionCall(source: ts.SourceFile, site: CallSite): ts.CallExpression | undefined {
  const position = source.getPositionOfLineAndCharacter(site.line - 1, site.column - 1);
  let found: ts.CallExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (found || position < node.getStart(source) || position >= node.getEnd()) return;
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'action') {
      if (node.expression.name.getStart(source) === position) found = node;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The types the action handler reads its options as: its options parameter (after the command's
 * arguments), and what it asks commander for inside (`command.opts<T>()`, `optsWithGlobals<T>()`).
 */
function optionsTypes(checker: ts.TypeChecker, call: ts.CallExpression, argumentCount: number): ts.Type[] {
  const handler = call.arguments[0];
  if (!handler) return [];
  const types: ts.Type[] = [];
  const parameter = checker.getTypeAtLocation(handler).getCallSignatures()[0]?.parameters[argumentCount];
  if (parameter) types.push(checker.getTypeOfSymbolAtLocation(parameter, handler));
  const visited = new Set<ts.Node>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      if (ts.isPropertyAccessExpression(node.expression) && ['opts', 'optsWithGlobals'].includes(node.expression.name.text)) {
        types.push(checker.getTypeAtLocation(node));
      }
      // Helpers the handler calls may ask commander themselves (`xdsContext(command)`).
      let symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(node.expression) ? node.expression.name : node.expression);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const callee = symbol?.valueDeclaration;
      if (callee && (ts.isFunctionDeclaration(callee) || ts.isArrowFunction(callee)) && !callee.getSourceFile().isDeclarationFile && !visited.has(callee)) {
        visited.add(callee);
        visit(callee);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(handler);
  return types;
}

const isLoose = (checker: ts.TypeChecker, type: ts.Type): boolean =>
  (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0 || checker.getIndexInfosOfType(type).length > 0;

/** The product files under `dirs` (relative to the project root): the sources whose reads count. */
export function productSources(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) => sourceFiles(join(PROJECT_ROOT, dir)));
}

/** Every flag of the commands with whether the `scanned` files of `program` read it. */
export function flagUses(commands: readonly Command[], sites: ReadonlyMap<Command, CallSite>, program: ts.Program, scanned: readonly string[]): FlagUse[] {
  const checker = program.getTypeChecker();
  const wanted = new Set<string>();
  const gather = (command: Command): void => {
    for (const option of command.options) wanted.add(option.attributeName());
    command.commands.forEach(gather);
  };
  commands.forEach(gather);
  const reads = collectReads(program, scanned, wanted);
  const uses: FlagUse[] = [];
  const walk = (command: Command, path: string): void => {
    const site = sites.get(command);
    const source = site ? program.getSourceFile(site.file) : undefined;
    const call = site && source ? findActionCall(source, site) : undefined;
    if (site && !call) throw new Error(`no .action( call at ${relative(PROJECT_ROOT, site.file)}:${site.line}:${site.column}`);
    const types = call ? optionsTypes(checker, call, command.registeredArguments.length) : [];
    for (const option of command.options) {
      const attribute = option.attributeName();
      const properties = types.flatMap((type) => type.getProperty(attribute) ?? []);
      let read: boolean;
      if (properties.length > 0) {
        read = properties.some((property) =>
          isRead(
            reads,
            checker.getRootSymbols(property).flatMap((root) => root.declarations ?? []),
          ),
        );
      } else if (types.length === 0 || types.some((type) => isLoose(checker, type))) {
        // No action (a group's options, read through optsWithGlobals), or options typed loosely: read by name.
        read = reads.names.has(attribute);
      } else {
        read = false; // no type the handler reads its options as even names it
      }
      uses.push({ command: path, flag: option.long ?? option.short ?? option.flags, read });
    }
    for (const sub of command.commands) walk(sub, `${path} ${sub.name()}`);
  };
  for (const command of commands) walk(command, command.name());
  return uses;
}

/** The project's TypeScript program, as `tsc -p tsconfig.json` builds it; or one of `files` alone, with its options. */
export function projectProgram(): ts.Program {
  const config = projectConfig();
  return ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences ?? [] });
}

export function programOf(files: readonly string[]): ts.Program {
  return ts.createProgram(files, projectConfig().options);
}

function projectConfig(): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(PROJECT_ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  return config;
}
