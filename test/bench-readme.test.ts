// bench/README.md's promise: every figure in its "Latest figures" table names the script in bench/ that prints it
// and a command that runs that script. Read as a newcomer would: the command in the row's Command cell is run from
// the repository's root, so the file it names must exist (or the package.json script it names must run one).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

type Row = { benchmark: string; command: string };

// The rows of the table under "## Latest figures": cells split on unescaped pipes, the header and rule left out.
function figureRows(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Latest figures'));
  if (!section) throw new Error('bench/README.md has no "## Latest figures" section');
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const [header = [], , ...body] = lines.map((line) => line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()));
  const benchmarkColumn = header.indexOf('Benchmark');
  const commandColumn = header.indexOf('Command');
  if (benchmarkColumn < 0 || commandColumn < 0) throw new Error('the figures table needs Benchmark and Command columns');
  return body.map((cells) => ({ benchmark: cells[benchmarkColumn] ?? '', command: cells[commandColumn] ?? '' }));
}

// What is wrong with a row's command, or null: the bench/ file it runs, directly or through an npm script.
function commandProblem(command: string, scripts: Record<string, string>): { problem: string | null; file?: string } {
  const code = /^`([^`]+)`$/.exec(command)?.[1];
  if (!code) return { problem: `the Command cell is not one command in backticks: ${command || '(empty)'}` };
  const words = code.split(/\s+/).filter((word) => !/^[A-Z_][A-Z0-9_]*=\S*$/.test(word)); // VAR=value prefixes
  let target: string | undefined;
  if (words[0] === 'npx' && words[1] === 'tsx') target = words[2];
  else if (words[0] === 'node') target = words[1];
  else if (words[0] === 'npm' && words[1] === 'run' && words[2]) {
    const script = scripts[words[2]];
    if (!script) return { problem: `package.json has no script "${words[2]}"` };
    target = /\b(bench\/[\w./-]+\.(?:ts|mjs|js))\b/.exec(script)?.[1];
    if (!target) return { problem: `npm script "${words[2]}" runs no file in bench/: ${script}` };
  } else return { problem: `not a command that runs a bench/ script (npx tsx, node, npm run): ${code}` };
  if (!target || !/^bench\/[^/]+\.(ts|mjs|js)$/.test(target)) return { problem: `does not run a script in bench/: ${code}` };
  if (!existsSync(join(root, target))) return { problem: `${target} does not exist`, file: target };
  return { problem: null, file: target };
}

function problems(markdown: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return figureRows(markdown).flatMap(({ benchmark, command }) => {
    const { problem } = commandProblem(command, scripts);
    return problem ? [`${benchmark}: ${problem}`] : [];
  });
}

describe('bench/README.md figures', () => {
  const readme = readFileSync(join(root, 'bench/README.md'), 'utf8');

  it('names, for every figure, a script in bench/ and a command that runs it', () => {
    expect(figureRows(readme).length).toBeGreaterThan(10);
    expect(problems(readme)).toEqual([]);
  });

  it('has a row for every benchmark script in bench/', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const quoted = new Set(figureRows(readme).map(({ command }) => commandProblem(command, scripts).file));
    const benchmarks = readdirSync(join(root, 'bench')).filter((name) => /\.(ts|mjs)$/.test(name)).map((name) => `bench/${name}`);
    expect(benchmarks.filter((file) => !quoted.has(file))).toEqual([]);
  });

  it('fails a row whose script is missing, or whose command runs nothing in bench/', () => {
    const table = (command: string) =>
      `## Latest figures\n\n| Benchmark | Command | Latest figure |\n|---|---|---|\n| Gone | ${command} | 1 ms |\n\n## Next\n`;
    expect(problems(table('`npx tsx bench/no-such-benchmark.ts`'))).toEqual(['Gone: bench/no-such-benchmark.ts does not exist']);
    expect(problems(table('`node bench/missing.mjs --anchors x`'))).toEqual(['Gone: bench/missing.mjs does not exist']);
    expect(problems(table('`npm run no-such-script`'))).toEqual(['Gone: package.json has no script "no-such-script"']);
    expect(problems(table('`npx tsx scripts/print-schema.ts`'))[0]).toMatch(/does not run a script in bench/);
    expect(problems(table('bench/abuse.ts'))[0]).toMatch(/not one command in backticks/);
    expect(problems(table('`BENCH_DATABASE_URL= npx tsx bench/abuse.ts`'))).toEqual([]);
  });
});
