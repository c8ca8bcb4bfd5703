/**
 * No module of Keywarden's sources imports itself back, however far round: layers import downward
 * only (docs/architecture.md, "Wiring"). A type-only import counts, because that is how a circle
 * hides: it costs nothing at run time, yet it ties the two modules' meanings together, and the next
 * value import along it makes the load order matter.
 */
import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FOLDERS = ['core', 'storage', 'sdk', 'plugins'];

/**
 * Circles in code that another part of issue #35 rewrites, each broken there: the list must match,
 * so the test fails when one is broken (then take it off) as it does for any new circle.
 */
const KNOWN: readonly string[] = [];

/** Module → the modules it imports, by path relative to the repository. */
type ImportGraph = ReadonlyMap<string, readonly string[]>;

/**
 * Every sibling module a TypeScript source names: imports and re-exports (type-only ones included),
 * `import()` and `import x = require()`; packages and files outside `known` are left out.
 */
function importsOf(file: string, source: string, known: ReadonlySet<string>): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  const targets = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName)).replace(/\.js$/, '.ts');
    if (known.has(target)) targets.add(target);
  }
  return [...targets];
}

/**
 * Each knot of modules that import one another (Tarjan's strongly connected components of two or
 * more, or a module importing itself), as one way round it and how many modules it ties.
 */
function cyclesIn(graph: ImportGraph): { way: string[]; modules: number }[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components
    .map((component) => ({ way: pathRound(graph, new Set(component)), modules: component.length }))
    .sort((a, b) => a.way[0]!.localeCompare(b.way[0]!));
}

/** One shortest way from the component's first module (by name) back to itself, through the component. */
function pathRound(graph: ImportGraph, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const way = [node];
        while (way[0] !== start) way.unshift(cameFrom.get(way[0]!)!);
        return [...way, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

async function sourceGraph(): Promise<ImportGraph> {
  const files: string[] = [];
  for (const folder of FOLDERS) {
    const entries = await readdir(path.join(ROOT, folder), { withFileTypes: true, recursive: true });
    for (const e of entries) {
      if (e.isFile() && e.name.endsWith('.ts')) files.push(path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
    }
  }
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) graph.set(file, importsOf(file, await readFile(path.join(ROOT, file), 'utf8'), known));
  return graph;
}

describe('import cycles', () => {
  it('no module in core/, storage/, sdk/ or plugins/ imports itself back, type-only imports included (but the circles known)', async () => {
    const graph = await sourceGraph();
    expect(graph.size).to.be.greaterThan(300);
    const knots = cyclesIn(graph).map(({ way, modules }) => `${way.join(' → ')}${modules > way.length - 1 ? ` (one way round ${modules} modules)` : ''}`);
    expect(knots).to.deep.equal(KNOWN);
  });

  it('the check finds a circle closed by a type-only import, a re-export or an import(), and names a way round it', () => {
    const known = new Set(['core/a.ts', 'core/b.ts', 'core/c.ts', 'core/d.ts', 'core/e.ts', 'core/f.ts']);
    const sources: Record<string, string> = {
      'core/a.ts': "import { b } from './b.js';\nimport { Ajv } from 'ajv';",
      'core/b.ts': "export { c } from './c.js';",
      'core/c.ts': "import type { A } from './a.js';",
      'core/d.ts': "const e = await import('./e.js');",
      'core/e.ts': "import { type D } from './d.js';\nimport { f } from './f.js';",
      'core/f.ts': "import path from 'node:path';",
    };
    const graph = new Map(Object.entries(sources).map(([file, source]) => [file, importsOf(file, source, known)]));
    expect(cyclesIn(graph)).to.deep.equal([
      { way: ['core/a.ts', 'core/b.ts', 'core/c.ts', 'core/a.ts'], modules: 3 },
      { way: ['core/d.ts', 'core/e.ts', 'core/d.ts'], modules: 2 },
    ]);
  });

  it('a module that imports nothing back is no circle, however many import it', () => {
    const graph = new Map([
      ['core/a.ts', ['core/c.ts']],
      ['core/b.ts', ['core/c.ts']],
      ['core/c.ts', []],
    ]);
    expect(cyclesIn(graph)).to.deep.equal([]);
  });
});
